import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite

/// A checksum of everything a database holds: the schema, every row of every table (user tables,
/// the operation queue, the errors, the config with its delta tokens, `sqlite_sequence`) in rowid
/// order, and the header values `user_version` / `application_id`.
///
/// Two databases with equal digests hold the same data, whatever their keys, salts or page
/// layout. The digest never leaves the library: a hash of a small table could confirm guesses
/// about its content, so reports show row counts only.
struct DatabaseDigest: Equatable, Sendable {
    /// One table's row count and content hash.
    struct Table: Equatable, Sendable {
        var name: String
        var rows: Int
        var hash: [UInt8]
    }

    /// The hash of the schema (`sqlite_master` without root pages) and header values.
    var schema: [UInt8]
    /// The tables by name, in name order.
    var tables: [Table]

    /// Computes the digest of the database open on `connection` (inside one read transaction).
    ///
    /// - Parameters:
    ///   - connection: The open database.
    /// - Throws: ``SQLiteError`` when a row cannot be read; ``StoreError/verificationFailed(_:)`` when
    ///   the hashing fails (a digest is never computed over part of the content).
    static func compute(_ connection: Connection) throws -> DatabaseDigest {
        do {
            return try digest(connection)
        } catch let error as KeyError {
            throw StoreError.verificationFailed("the content digest could not be computed: \(error)")
        }
    }

    private static func digest(_ connection: Connection) throws -> DatabaseDigest {
        try connection.readTransaction {
            let schemaRows = try connection.rows(
                """
                SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name
                """)
            var schemaHash = try SHA256Hasher()
            for row in schemaRows { try schemaHash.update(row: row) }
            try schemaHash.update(row: [
                try connection.scalar("PRAGMA user_version") ?? .null,
                try connection.scalar("PRAGMA application_id") ?? .null,
            ])
            var tables: [Table] = []
            for row in schemaRows where row[0].textValue == "table" {
                guard let name = row[1].textValue, let sql = row[3].textValue,
                    !sql.uppercased().hasPrefix("CREATE VIRTUAL")
                else { continue }
                let withoutRowID = sql.uppercased().contains("WITHOUT ROWID")
                let quoted = SQLIdentifier.quote(name)
                let query =
                    withoutRowID
                    ? "SELECT * FROM \(quoted)"
                    : "SELECT rowid, * FROM \(quoted) ORDER BY rowid"
                var hash = try SHA256Hasher()
                let count = try hashRows(of: try connection.prepare(query), into: &hash)
                tables.append(Table(name: name, rows: count, hash: try hash.finalize()))
            }
            return DatabaseDigest(schema: try schemaHash.finalize(), tables: tables.sorted { $0.name < $1.name })
        }
    }

    /// Feeds every row of `statement` into `hasher` in the encoding of ``SHA256Hasher/update(row:)``,
    /// reading each value where SQLite holds it (no `SQLValue`, `String` or array per value) and
    /// handing OpenSSL 64 KiB at a time.
    ///
    /// - Returns: The number of rows.
    private static func hashRows(of statement: Statement, into hasher: inout SHA256Hasher) throws -> Int {
        let columns = statement.columnCount
        let buffer = RowBuffer()
        defer { buffer.deallocate() }

        /// Appends with `write`, handing the buffer to the hasher first when it is full.
        func put(_ write: () -> Bool) throws(KeyError) {
            guard !write() else { return }
            try buffer.flush(into: &hasher)
            guard write() else { throw KeyError.cryptoFailure("a row value does not fit the digest's buffer") }
        }

        /// Appends the text or blob of `column`. Its bytes are valid only inside withBytes: copied
        /// there into the buffer or, larger than the buffer, handed to the hasher there.
        func putBytes(tag: UInt8, of column: Int) throws(KeyError) {
            if statement.withBytes(at: column, { buffer.append(tag: tag, $0) }) { return }
            try buffer.flush(into: &hasher)
            if statement.withBytes(at: column, { buffer.append(tag: tag, $0) }) { return }
            try statement.withBytes(at: column) { (bytes) throws(KeyError) in
                _ = buffer.append(tag: tag, length: bytes.count)
                try buffer.flush(into: &hasher)
                try hasher.update(bytes)
            }
        }

        var rows = 0
        while try statement.step() {
            try put { buffer.append(tag: UInt8(ascii: "R"), word: UInt64(columns)) }
            for column in 0..<columns {
                switch statement.storage(at: column) {
                case .null: try put { buffer.append(tag: UInt8(ascii: "N"), UnsafeRawBufferPointer(start: nil, count: 0)) }
                case .integer:
                    let value = UInt64(bitPattern: statement.integer(at: column))
                    try put { buffer.append(tag: UInt8(ascii: "I"), word: value) }
                case .real:
                    let value = statement.real(at: column).bitPattern
                    try put { buffer.append(tag: UInt8(ascii: "F"), word: value) }
                case .text: try putBytes(tag: UInt8(ascii: "T"), of: column)
                case .blob: try putBytes(tag: UInt8(ascii: "B"), of: column)
                }
            }
            rows += 1
        }
        try buffer.flush(into: &hasher)
        return rows
    }

    /// The names of the tables whose rows differ from `other` (or exist in only one of them).
    func differences(from other: DatabaseDigest) -> [String] {
        var names: [String] = []
        if schema != other.schema { names.append("the schema") }
        let mine = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let theirs = Dictionary(other.tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in Set(mine.keys).union(theirs.keys).sorted() where mine[name] != theirs[name] {
            names.append(name)
        }
        return names
    }
}

extension SHA256Hasher {
    /// Feeds one row of SQLite values in an unambiguous encoding (type tag, length, bytes), so
    /// that no two different rows hash the same input.
    ///
    /// - Throws: ``KeyError/cryptoFailure(_:)`` when the hashing fails.
    mutating func update(row: [SQLValue]) throws(KeyError) {
        try append(tag: UInt8(ascii: "R"), bytes: withUnsafeBytes(of: UInt64(row.count).littleEndian, Array.init))
        for value in row {
            switch value {
            case .null: try append(tag: UInt8(ascii: "N"), bytes: [])
            case .integer(let i): try append(tag: UInt8(ascii: "I"), bytes: withUnsafeBytes(of: i.littleEndian, Array.init))
            case .real(let d): try append(tag: UInt8(ascii: "F"), bytes: withUnsafeBytes(of: d.bitPattern.littleEndian, Array.init))
            case .text(let s): try append(tag: UInt8(ascii: "T"), bytes: Array(s.utf8))
            case .blob(let b): try append(tag: UInt8(ascii: "B"), bytes: b)
            }
        }
    }

    private mutating func append(tag: UInt8, bytes: [UInt8]) throws(KeyError) {
        var header = [tag]
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { header.append(contentsOf: $0) }
        try update(header)
        try update(bytes)
    }
}

/// The 64 KiB buffer through which ``DatabaseDigest`` hands rows to the hasher, in the encoding
/// of ``SHA256Hasher/update(row:)`` (a tag, a little-endian 64-bit length, the bytes).
///
/// Its fill level lives behind a pointer, so that the closures that append to it capture
/// constants only: no exclusivity check at run time for each of the millions of values a digest
/// reads. Owned by one function, which calls ``deallocate()``.
private struct RowBuffer {
    static let capacity = 1 << 16
    private let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
    private let used = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    init() { used.initialize(to: 0) }

    func deallocate() {
        bytes.deallocate()
        used.deallocate()
    }

    /// Appends a tag and `length`; `false` (nothing appended) when they do not fit.
    func append(tag: UInt8, length: Int) -> Bool {
        let start = used.pointee
        guard Self.capacity - start >= 9 else { return false }
        bytes[start] = tag
        bytes.storeBytes(of: UInt64(length).littleEndian, toByteOffset: start + 1, as: UInt64.self)
        used.pointee = start + 9
        return true
    }

    /// Appends a tag, the length 8 and `word`; `false` when they do not fit.
    func append(tag: UInt8, word: UInt64) -> Bool {
        let start = used.pointee
        guard Self.capacity - start >= 17, append(tag: tag, length: 8) else { return false }
        bytes.storeBytes(of: word.littleEndian, toByteOffset: start + 9, as: UInt64.self)
        used.pointee = start + 17
        return true
    }

    /// Appends a tag, the length of `content` and `content`; `false` when they do not fit.
    func append(tag: UInt8, _ content: UnsafeRawBufferPointer) -> Bool {
        let start = used.pointee
        guard Self.capacity - start >= 9 + content.count, append(tag: tag, length: content.count) else { return false }
        if !content.isEmpty {
            UnsafeMutableRawBufferPointer(rebasing: bytes[(start + 9)..<(start + 9 + content.count)]).copyMemory(from: content)
        }
        used.pointee = start + 9 + content.count
        return true
    }

    /// Hands what the buffer holds to `hasher` and empties it.
    func flush(into hasher: inout SHA256Hasher) throws(KeyError) {
        try hasher.update(UnsafeRawBufferPointer(rebasing: bytes[0..<used.pointee]))
        used.pointee = 0
    }
}
