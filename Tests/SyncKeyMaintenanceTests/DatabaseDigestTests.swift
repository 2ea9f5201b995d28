import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite
import SyncTestSupport
import Testing

@testable import SyncKeyMaintenance

/// The content digest that proves a re-encrypted copy complete.
@Suite struct DatabaseDigestTests {
    static let schema = "CREATE TABLE t (a TEXT, b INTEGER, c REAL, d BLOB)"

    /// A database with one table of two rows covering every value type.
    static func makeDatabase(at url: URL, key: SecretBytes?) throws {
        let connection = try open(url, key: key, create: true)
        defer { connection.close() }
        try connection.execute(schema)
        try connection.execute(
            "INSERT INTO t (rowid, a, b, c, d) VALUES (?, ?, ?, ?, ?)", [.integer(1), .text("héllo"), .integer(42), .real(1.5), .blob([0x00, 0xFF])])
        try connection.execute("INSERT INTO t (rowid, a, b, c, d) VALUES (?, ?, ?, ?, ?)", [.integer(2), .null, .integer(-7), .null, .null])
    }

    static func open(_ url: URL, key: SecretBytes?, create: Bool = false) throws -> Connection {
        let mode: Connection.OpenMode = create ? .readWriteCreate : .readWrite
        guard let key else { return try Connection.open(path: url.path, mode: mode) }
        return try key.withUnsafeBytes { try Connection.open(path: url.path, mode: mode, key: $0) }
    }

    @Test func theDigestIsSHA256OfTheDocumentedRowEncoding() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("plain.db")
        try Self.makeDatabase(at: url, key: nil)
        let connection = try Self.open(url, key: nil)
        defer { connection.close() }
        let digest = try DatabaseDigest.compute(connection)
        // Computed independently (Python's hashlib) over the encoding DatabaseDigest documents: per
        // row `R` + u64le(count), then per value a tag (N I F T B) + u64le(length) + its bytes
        // (integers and reals as 8 little-endian bytes, text as UTF-8), rows in rowid order with the rowid first.
        #expect(digest.tables.map(\.name) == ["t"])
        #expect(digest.tables.first?.rows == 2)
        #expect(digest.tables.first.map { hex($0.hash) } == "5d8d87cc95099defcc92a826b4d5e976f933686dda1b195e41324a1a091a2db2")
        // The schema row (type, name, tbl_name, sql), then the header values user_version and application_id.
        #expect(hex(digest.schema) == "f38d461de4867707189fdf07572e7478dc36979291a7173b964131fdf1fe27f3")
    }

    @Test func equalContentUnderAnotherKeyHasTheSameDigestAndAnyChangeIsNamed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let plainURL = directory.file("plain.db"), keyedURL = directory.file("keyed.db")
        let key = try SecretBytes.random(count: 32)
        try Self.makeDatabase(at: plainURL, key: nil)
        try Self.makeDatabase(at: keyedURL, key: key)
        let plain = try Self.open(plainURL, key: nil)
        defer { plain.close() }
        let keyed = try Self.open(keyedURL, key: key)
        defer { keyed.close() }
        let before = try DatabaseDigest.compute(plain)
        #expect(try DatabaseDigest.compute(keyed) == before)

        try keyed.execute("UPDATE t SET b = 43 WHERE rowid = 1")
        #expect(try DatabaseDigest.compute(keyed).differences(from: before) == ["t"])
        try keyed.execute("UPDATE t SET b = 42 WHERE rowid = 1")
        try keyed.execute("CREATE TABLE u (x)")
        #expect(try DatabaseDigest.compute(keyed).differences(from: before) == ["the schema", "u"])
    }

    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
