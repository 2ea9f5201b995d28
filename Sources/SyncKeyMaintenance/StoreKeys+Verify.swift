public import Foundation
public import SyncKeys
import SyncSQL
import SyncSQLite

/// The result of `sync-keys verify`: each at-rest check a compliance officer would run.
public struct StoreVerificationReport: Sendable, Codable {
    /// One check: a stable name, whether it passed, and what was found.
    public struct Check: Sendable, Codable, Equatable {
        /// The check's stable name (`kdf-floor`, `header-encrypted`, …).
        public var name: String
        /// Whether the check passed.
        public var passed: Bool
        /// What was found, in words (never key material).
        public var detail: String
    }

    /// A table and its row count (never its content or a hash of it).
    public struct TableCount: Sendable, Codable, Equatable {
        /// The table's name.
        public var name: String
        /// The number of rows.
        public var rows: Int
    }

    /// The database file.
    public var database: String
    /// The checks, in the order they ran.
    public var checks: [Check]
    /// The pages of the database, all read.
    public var pages: Int
    /// Every table, system tables included, with its row count.
    public var tables: [TableCount]
    /// Whether every check passed.
    public var passed: Bool { checks.allSatisfy(\.passed) }

    private enum CodingKeys: String, CodingKey { case database, checks, pages, tables, passed }

    /// A report.
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - checks: The checks, in the order they ran.
    ///   - pages: The pages read.
    ///   - tables: Every table with its row count.
    public init(database: String, checks: [Check], pages: Int, tables: [TableCount]) {
        self.database = database
        self.checks = checks
        self.pages = pages
        self.tables = tables
    }

    /// Reads a report written by `encode(to:)`.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: A decoding error when a field is missing or mistyped.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        database = try container.decode(String.self, forKey: .database)
        checks = try container.decode([Check].self, forKey: .checks)
        pages = try container.decode(Int.self, forKey: .pages)
        tables = try container.decode([TableCount].self, forKey: .tables)
    }

    /// Writes the report, `passed` included.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: An encoding error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(database, forKey: .database)
        try container.encode(checks, forKey: .checks)
        try container.encode(pages, forKey: .pages)
        try container.encode(tables, forKey: .tables)
        try container.encode(passed, forKey: .passed)
    }
}

extension StoreKeys {
    /// Unlocks the store at `database`, reads every page, runs `integrity_check`, and checks the
    /// store at rest: the envelope state and KDF floor, the database header, the SQLCipher library,
    /// the page size recorded in the envelope, file modes (0600 files, 0700 directory) and stray
    /// files beside the store. Changes nothing; refused while a rotation runs.
    ///
    /// - Returns: A report; ``StoreVerificationReport/passed`` only when every check passed.
    /// - Throws: ``StoreError/wrongPassphrase``, ``StoreError/keyMaterialMissing``,
    ///   ``StoreError/keyMaterialCorrupt(_:)``, ``StoreError/corruptOrKeyMismatch`` when the data
    ///   key does not open the database, ``StoreError/storeInUse(_:)`` during a rotation.
    public static func verify(
        database: URL, passphrase: SecretBytes, allowInsecureProfile: Bool = false
    ) throws -> StoreVerificationReport {
        try verify(database: database, unlocker: SecretUnlocker(passphrase), allowInsecureProfile: allowInsecureProfile)
    }

    /// ``verify(database:passphrase:allowInsecureProfile:)``, unlocking through any slot.
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - unlocker: The slot and its secret (a passphrase, a recovery code, a TPM).
    ///   - allowInsecureProfile: Accept the test-only key profile.
    /// - Returns: The report.
    /// - Throws: As ``verify(database:passphrase:allowInsecureProfile:)``, and the TPM's errors.
    public static func verify(
        database: URL, unlocker: any SlotUnlocker, allowInsecureProfile: Bool = false
    ) throws -> StoreVerificationReport {
        // A check reads: it creates no file (no lock file, no -wal or -shm), so it works on a full
        // disk and on read-only media.
        let lock = try StoreLock.acquire(for: database, mode: .shared, create: false)
        defer { withExtendedLifetime(lock) {} }
        guard StoreFiles.exists(database) else { throw StoreError.storeNotFound(database.path) }
        var checks: [StoreVerificationReport.Check] = []
        func check(_ name: String, _ passed: Bool, _ detail: String) {
            checks.append(.init(name: name, passed: passed, detail: detail))
        }
        let (strayOK, strayDetail) = strayFiles(beside: database)
        let (modesOK, modesDetail) = fileModes(of: database)

        let envelope = try readEnvelope(of: database)
        let keys = try unlock(envelope, using: unlocker, allowInsecureProfile: allowInsecureProfile)
        check("envelope", true, "format \(envelope.version), authenticated, data key \(envelope.keyId)")
        check(
            "rotation-state", envelope.state == .active,
            envelope.state == .active ? "no rotation in progress" : "a rotation was interrupted; run sync-keys rotate to finish it")
        let weak = envelope.slots.filter { !kdfInfo($0.kdf).meetsFloor }.map(\.id)
        check(
            "kdf-floor", weak.isEmpty,
            weak.isEmpty
                ? "every slot meets the floor (scrypt N≥2^17 r=8 p=1 or PBKDF2-SHA512 ≥220,000; salt ≥16 bytes)"
                : "below the floor: \(weak.joined(separator: ", "))")
        let header = (try? FileHandle(forReadingFrom: database).read(upToCount: 16)) ?? nil
        let headerOK = header.map { $0.count == 16 && !StoreFiles.isPlainDatabase(at: database) && !$0.allSatisfy { $0 == 0 } } ?? false
        check(
            "header", headerOK, headerOK ? "the first 16 bytes are a random salt, not the SQLite header" : "the database header is plaintext or empty"
        )

        let connection: Connection
        do {
            let mode = StoreFiles.readOnlyMode(of: database)
            connection = try keys.dataKey.withUnsafeBytes { try Connection.open(path: database.path, mode: mode, key: $0) }
        } catch let error as SQLiteError where ResultCode.notADatabase ~= error.code {
            throw StoreError.corruptOrKeyMismatch
        } catch {
            throw Reencryption.mapped(error, database: database)
        }
        defer { connection.close() }
        let version = try connection.cipherVersion() ?? "none"
        let provider = try connection.cipherProvider() ?? "none"
        check(
            "library", version == Connection.expectedCipherVersion && provider == "openssl",
            "SQLCipher \(version), provider \(provider)")
        let pageSize = Int(try connection.scalar("PRAGMA page_size")?.integerValue ?? 0)
        check(
            "page-size", pageSize == envelope.cipher.pageSize && envelope.cipher.hmac,
            "page size \(pageSize), envelope says \(envelope.cipher.pageSize), HMAC \(envelope.cipher.hmac ? "on" : "off")")
        // A page that fails to decrypt or authenticate is a finding of the report, not an abort.
        let problems =
            try damageTolerant { try connection.integrityCheck() }
            ?? ["a page does not decrypt or authenticate (the file is damaged)"]
        check("integrity", problems == ["ok"], problems == ["ok"] ? "integrity_check ok" : problems.prefix(3).joined(separator: "; "))
        let digest = try damageTolerant { try DatabaseDigest.compute(connection) }
        let pages = Int(try connection.scalar("PRAGMA page_count")?.integerValue ?? 0)
        let tables = digest?.tables ?? []
        let rows = tables.reduce(0) { $0 + $1.rows }
        check(
            "read-all", digest != nil,
            digest != nil ? "read \(rows) rows in \(tables.count) tables (\(pages) pages)" : "some rows could not be read (damaged pages)")
        let attachments = try damageTolerant { try AttachmentKeys.verify(connection: connection, database: database, dataKey: keys.dataKey) }
        check(
            "attachments", attachments?.problems.isEmpty ?? false,
            attachments.map { found in
                found.problems.isEmpty
                    ? "\(found.checked) attachment file(s): every segment's tag checks, in order"
                    : found.problems.prefix(3).joined(separator: "; ")
            } ?? "the attachment keys could not be read (damaged pages)")
        check("file-modes", modesOK, modesDetail)
        check("stray-files", strayOK, strayDetail)
        return StoreVerificationReport(
            database: database.path, checks: checks, pages: pages,
            tables: tables.map { .init(name: $0.name, rows: $0.rows) })
    }

    /// `body`'s result, or `nil` when SQLite fails while reading (a damaged page fails its HMAC
    /// and SQLCipher 3.4.1 reports that as one of several codes); other errors are thrown.
    private static func damageTolerant<T>(_ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch is SQLiteError {
            return nil
        }
    }

    /// The files a store may have beside its database.
    static func expectedFiles(of database: URL) -> Set<String> {
        let name = database.lastPathComponent
        return [name, name + ".keys", name + ".lock", name + "-wal", name + "-shm", name + ".attachments"]
    }

    /// Whether the directory holds only the store's own files.
    static func strayFiles(beside database: URL) -> (Bool, String) {
        let directory = database.deletingLastPathComponent()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            return (false, "cannot list \(directory.path)")
        }
        let stray = names.filter { !expectedFiles(of: database).contains($0) }.sorted()
        return stray.isEmpty
            ? (true, "only the store's files in \(directory.path)")
            : (false, "unexpected files beside the store: \(stray.prefix(10).joined(separator: ", "))")
    }

    /// Whether the store's files are 0600 (no group or other access) and its directory 0700.
    static func fileModes(of database: URL) -> (Bool, String) {
        var problems: [String] = []
        let directory = database.deletingLastPathComponent()
        var info = stat()
        if stat(directory.path, &info) == 0, info.st_mode & 0o077 != 0 {
            problems.append("directory is \(String(info.st_mode & 0o777, radix: 8)) (want 700)")
        }
        let attachments = AttachmentKeys.directory(of: database).lastPathComponent
        for name in expectedFiles(of: database).sorted() {
            let path = directory.appendingPathComponent(name).path
            // The attachment directory is a 700 directory; everything else a 600 file.
            let kind = name == attachments ? S_IFDIR : S_IFREG
            if lstat(path, &info) == 0, info.st_mode & 0o077 != 0 || (info.st_mode & S_IFMT) != kind {
                problems.append("\(name) is \(String(info.st_mode & 0o777, radix: 8)) (want a \(kind == S_IFDIR ? "700 directory" : "600 file"))")
            }
        }
        return problems.isEmpty
            ? (true, "files 600, directory 700")
            : (false, problems.joined(separator: "; "))
    }
}
