import Foundation
import SyncSQL
import SyncSQLite
import SyncTestSupport
import Testing

@Suite struct AttachTests {
    @Test func keyedAttachExportsIntoAnEncryptedFileThatOnlyTheNewKeyOpens() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let oldKey = randomKey(), newKey = randomKey()
        let source = try open(dir.path("a.db"), key: oldKey)
        try source.execute("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER); CREATE TABLE s (k INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)")
        try source.transaction {
            for i in 0..<2_000 { try source.execute("INSERT INTO t VALUES (?, ?)", [.text("id-\(i)-marker"), .integer(Int64(i))]) }
            for i in 0..<50 { try source.execute("INSERT INTO s (v) VALUES (?)", [.text("v\(i)")]) }
            try source.execute("DELETE FROM t WHERE n % 7 = 0")
        }
        let before = try source.rows("SELECT rowid, * FROM t ORDER BY rowid")
        var ticks = 0
        try newKey.withUnsafeBytes { try source.attach(path: dir.path("b.db"), as: "target", key: $0) }
        try source.withProgressHandler(every: 1_000, { ticks += 1 }) {
            _ = try source.scalar("SELECT sqlcipher_export('target')")
        }
        try source.detach("target")
        source.close()
        #expect(ticks > 0)

        let header = try Data(contentsOf: dir.file("b.db")).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8))
        #expect(throws: SQLiteError.self) { try open(dir.path("b.db"), key: oldKey, mode: .readWrite) }
        let copy = try open(dir.path("b.db"), key: newKey, mode: .readWrite)
        defer { copy.close() }
        #expect(try copy.rows("SELECT rowid, * FROM t ORDER BY rowid") == before)
        #expect(try copy.scalar("SELECT seq FROM sqlite_sequence WHERE name = 's'") == .integer(50))
        #expect(try copy.integrityCheck() == ["ok"])
        #expect(try copy.scalar("PRAGMA page_size") == .integer(Int64(Connection.pageSize)))
    }

    @Test func plainAttachOfAKeyedDatabaseWritesPlaintextOnlyWhenAskedTo() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let source = try open(dir.path("a.db"), key: randomKey())
        try source.execute("CREATE TABLE t (x TEXT)")
        try source.execute("INSERT INTO t VALUES ('hello')")
        try source.attach(path: dir.path("plain.db"), as: "p", key: nil)
        _ = try source.scalar("SELECT sqlcipher_export('p')")
        try source.detach("p")
        source.close()
        let header = try Data(contentsOf: dir.file("plain.db")).prefix(16)
        #expect(header == Data("SQLite format 3\0".utf8))
    }

    @Test func attachRejectsAKeyOfTheWrongLength() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let source = try open(dir.path("a.db"), key: randomKey())
        defer { source.close() }
        let short = [UInt8](repeating: 7, count: 31)
        #expect(throws: SQLiteError.self) {
            try short.withUnsafeBytes { try source.attach(path: dir.path("b.db"), as: "b", key: $0) }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("b.db")))
    }
}
