import Foundation
import SyncSQL
import SyncSQLite
import SyncTestSupport
import Testing

/// A random 32-byte key for one test.
func randomKey() -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

func open(_ path: String, key: [UInt8]?, mode: Connection.OpenMode = .readWriteCreate) throws -> Connection {
    guard let key else { return try Connection.open(path: path, mode: mode) }
    return try key.withUnsafeBytes { try Connection.open(path: path, mode: mode, key: $0) }
}

@Suite struct ConnectionTests {
    @Test func bindsAndReadsEveryValueType() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try open(dir.path("t.db"), key: nil)
        defer { db.close() }
        try db.execute("CREATE TABLE t (a, b, c, d, e)")
        let values: [SQLValue] = [.integer(-42), .real(2.5), .text("héllo ✓"), .blob([0, 1, 255]), .null]
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", values)
        #expect(try db.rows("SELECT a, b, c, d, e FROM t") == [values])
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.blob([]), .text(""), 0, nil, nil])
        #expect(try db.rows("SELECT d FROM t WHERE a = 0 OR typeof(a) = 'blob'").count == 1)
    }

    @Test func keyedDatabaseReopensOnlyWithItsKey() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("k.db")
        let key = randomKey()
        let db = try open(path, key: key)
        try db.execute("CREATE TABLE t (x TEXT)")
        try db.execute("INSERT INTO t VALUES (?)", ["secret-marker"])
        #expect(try db.cipherProvider() == "openssl")
        db.close()

        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8))

        let again = try open(path, key: key, mode: .readWrite)
        defer { again.close() }
        #expect(try again.scalar("SELECT x FROM t") == .text("secret-marker"))

        var wrong = key
        wrong[0] ^= 1
        let error = #expect(throws: SQLiteError.self) { try open(path, key: wrong, mode: .readWrite) }
        #expect(error?.code == .notADatabase)
        #expect(throws: SQLiteError.self) { try open(path, key: nil, mode: .readWrite) }
    }

    @Test func rejectsKeysThatAreNot32Bytes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let error = #expect(throws: SQLiteError.self) { try open(dir.path("x.db"), key: [1, 2, 3]) }
        #expect(error?.code == .misuse)
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.db")))
    }

    @Test func openWithoutCreateNeverCreatesAFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(throws: SQLiteError.self) { try open(dir.path("missing.db"), key: randomKey(), mode: .readWrite) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    @Test func everyConnectionIsHardened() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for key in [nil, randomKey()] {
            let db = try open(dir.path("h-\(key == nil).db"), key: key)
            defer { db.close() }
            #expect(try db.cipherVersion() == Connection.expectedCipherVersion)
            #expect(try db.integerPragma("temp_store") == 2)
            #expect(try db.integerPragma("secure_delete") == 1)
            try db.execute("CREATE TABLE t (x)")
            #expect(try db.integerPragma("page_size") == 4096)
        }
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        struct Boom: Error {}
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try open(dir.path("t.db"), key: randomKey())
        defer { db.close() }
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.transaction { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        #expect(try db.scalar("SELECT group_concat(x) FROM t") == .text("1"))
    }

    @Test func errorsCarryCodeAndSQLButNotValues() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try open(dir.path("t.db"), key: nil)
        defer { db.close() }
        try db.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
        try db.execute("INSERT INTO t VALUES (?)", ["value-one"])
        let error = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?)", ["value-one"]) }
        let caught = try #require(error)
        #expect(ResultCode.constraint ~= caught.code)
        #expect(caught.sql == "INSERT INTO t VALUES (?)")
        #expect(!caught.description.contains("value-one"))
        db.close()
        #expect(throws: SQLiteError.self) { try db.execute("SELECT 1") }
    }
}
