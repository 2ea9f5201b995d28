internal import CSQLCipher
import SyncKeys

extension Connection {
    /// Attaches another database file to this connection under `name`, with its own raw key.
    ///
    /// The key reaches SQLCipher as a bound parameter of `ATTACH DATABASE ? AS name KEY ?` (the
    /// raw-key text `x'<64 hex>'` in a secret buffer that SQLite does not copy and that is wiped
    /// when dropped), never as SQL text. With `key == nil` the attached file is plain (`KEY ''`),
    /// never keyed with the main database's key by accident. A keyed attachment gets the
    /// CipherSync page size, declared before its first page is written.
    ///
    /// SQLCipher 3.4.1 creates a *plaintext* attached file when `ATTACH` runs before the main
    /// database's first page read; every ``Connection`` has done that read when
    /// ``open(path:mode:key:)`` returned, so this method is safe on any open connection.
    ///
    /// - Parameters:
    ///   - path: The file to attach (created when absent).
    ///   - name: The schema name: ASCII letters, digits and `_` only.
    ///   - key: A 32-byte raw key, or `nil` for a plain attachment.
    /// - Throws: ``SQLiteError``.
    public func attach(path: String, as name: String, key: UnsafeRawBufferPointer?) throws(SQLiteError) {
        precondition(Self.isPlainIdentifier(name), "schema names are plain identifiers")
        if let key, key.count != 32 { throw .invalidKeyLength(key.count) }
        let statement = try prepare("ATTACH DATABASE ? AS \(name) KEY ?")
        let text = key.map { Connection.rawKeyText($0) } ?? SecretBytes([])
        let rc: Int32 = text.withUnsafeBytes { raw in
            sqlite3_reset(statement.handle)
            sqlite3_clear_bindings(statement.handle)
            var rc = sqlite3_bind_text(statement.handle, 1, path, -1, csqlcipher_transient())
            guard rc == SQLITE_OK else { return rc }
            if let base = raw.baseAddress, raw.count > 0 {
                // SQLITE_STATIC (nil): SQLite reads the key from this buffer and keeps no copy;
                // the bindings are cleared before the buffer goes out of scope.
                rc = sqlite3_bind_blob(statement.handle, 2, base, Int32(raw.count), nil)
            } else {
                rc = sqlite3_bind_text(statement.handle, 2, "", 0, nil)
            }
            guard rc == SQLITE_OK else { return rc }
            rc = sqlite3_step(statement.handle)
            sqlite3_reset(statement.handle)
            sqlite3_clear_bindings(statement.handle)
            return rc == SQLITE_DONE ? SQLITE_OK : rc
        }
        guard rc == SQLITE_OK else { throw error(rc, sql: statement.sql) }
        if key != nil {
            try execute("PRAGMA \(name).cipher_page_size = \(Connection.pageSize)")
        } else {
            try execute("PRAGMA \(name).page_size = \(Connection.pageSize)")
        }
    }

    /// Detaches the database attached as `name`.
    public func detach(_ name: String) throws(SQLiteError) {
        precondition(Self.isPlainIdentifier(name), "schema names are plain identifiers")
        try execute("DETACH DATABASE \(name)")
    }

    /// Runs `body` with `handler` called about every `instructions` virtual-machine steps of the
    /// statements it runs (SQLite's progress handler), for progress reports during long statements.
    ///
    /// - Parameters:
    ///   - instructions: How many VM instructions between calls (at least 1).
    ///   - handler: Called on this thread in the middle of a statement: it must not use the
    ///     connection.
    ///   - body: The work to observe.
    public func withProgressHandler<T>(
        every instructions: Int32, _ handler: () -> Void, _ body: () throws -> T
    ) throws -> T {
        let db = try requireHandle()
        return try withoutActuallyEscaping(handler) { handler in
            let box = ProgressBox(handler)
            sqlite3_progress_handler(
                db, max(instructions, 1),
                { context in
                    guard let context else { return 0 }
                    Unmanaged<ProgressBox>.fromOpaque(context).takeUnretainedValue().handler()
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque())
            defer {
                sqlite3_progress_handler(db, 0, nil, nil)
                withExtendedLifetime(box) {}
            }
            return try body()
        }
    }

    /// Whether `name` is a non-empty run of ASCII letters, digits and `_`.
    static func isPlainIdentifier(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            }
    }
}

/// Carries a progress closure through SQLite's `void *` context.
private final class ProgressBox {
    let handler: () -> Void
    init(_ handler: @escaping () -> Void) { self.handler = handler }
}
