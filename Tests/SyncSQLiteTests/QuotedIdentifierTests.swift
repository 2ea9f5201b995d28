import SyncSQL
import SyncSQLite
import Testing

/// Identifiers quoted by `SQLIdentifier` are the names SQLite stores, whatever their characters.
@Suite struct QuotedIdentifierTests {
    /// A double quote followed by a combining mark was left single, so it ended the identifier
    /// and the rest of the name was read as SQL.
    @Test func aQuoteBeforeACombiningMarkStaysInTheName() throws {
        let db = try Connection.open(path: ":memory:", mode: .readWriteCreate)
        defer { db.close() }
        let names = ["x\"\u{301}y", "\"\u{301}", "a\"\u{301} INTEGER); CREATE TABLE \"evil\" (\"b"]
        try db.execute("CREATE TABLE \"t\" (\(names.map(SQLIdentifier.quote).joined(separator: ", ")))")
        #expect(try db.rows("PRAGMA table_info(\"t\")").map { $0[1] } == names.map { .text($0) })
        #expect(try db.rows("SELECT name FROM sqlite_master").map { $0[0] } == [.text("t")])
    }
}
