import Foundation
import HTTPTypes
import Logging
import SQLiteNIO
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// Server files made before ids were folded keep working: opening one rebuilds its tables with
/// the folding id column, keeping every row; one holding two ids that differ only by case is
/// refused with a message naming the table, and left as it was.
@Suite struct LegacyDatabaseTests {
    /// A file as the server wrote it before ids were folded (`id` compared byte for byte).
    static func makeLegacyFile(_ path: String, ids: [String], updatedAt: String = "2001-01-01T00:00:00.000Z") async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        _ = try await connection.query("PRAGMA journal_mode = WAL", [])
        _ = try await connection.query(
            """
            CREATE TABLE "todo" ("id" TEXT PRIMARY KEY NOT NULL, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL, \
            "version" TEXT NOT NULL, "deleted" BOOLEAN NOT NULL DEFAULT 0)
            """, [])
        _ = try await connection.query(#"CREATE INDEX "todo_updatedAt" ON "todo" ("updatedAt")"#, [])
        for (name, type) in [("text", "TEXT"), ("n", "INTEGER"), ("tags", "JSON"), ("done", "BOOLEAN")] {
            _ = try await connection.query(#"ALTER TABLE "todo" ADD COLUMN "\#(name)" \#(type)"#, [])
        }
        for (index, id) in ids.enumerated() {
            _ = try await connection.query(
                #"INSERT INTO "todo" ("id", "createdAt", "updatedAt", "version", "deleted", "text", "n", "tags", "done") VALUES (?, ?, ?, ?, 0, ?, ?, ?, 1)"#,
                [.text(id), .text(updatedAt), .text(updatedAt), .text("v\(index)"), .text("item \(index)"), .integer(index), .text("[\(index)]")])
        }
        try await connection.close()
    }

    @Test func aFileMadeBeforeIDsFoldedIsRebuiltWithEveryRow() async throws {
        let directory = try TemporaryDirectory(prefix: "legacy")
        defer { directory.remove() }
        let path = directory.path("server.db")
        // One row stamped far ahead, as a server with a fast clock would have left it.
        try await Self.makeLegacyFile(path, ids: ["One", "two"], updatedAt: "2999-01-01T00:00:00.000Z")
        for _ in 0..<2 {  // the second open finds the table folded already
            let server = try await RunningServer.start(ServerConfiguration(port: 0, database: .sqlite(path: path), logger: .quiet))
            let client = HTTPTestClient()
            do {
                let one = try await client.send(.get, server.url, "/tables/todo/ONE").object
                #expect(one["id"] == "One" && one["text"] == "item 0" && one["n"] == 0 && one["tags"] == [0] && one["done"] == true)
                #expect(one["version"] == "v0" && one["createdAt"] == "2999-01-01T00:00:00.000Z")
                #expect(try await client.send(.post, server.url, "/tables/todo", object: ["id": "one"]).status == .conflict)
                let patched = try await client.send(.patch, server.url, "/tables/todo/TWO", object: ["n": 5]).object
                #expect(patched["id"] == "two" && patched["n"] == 5)
                #expect((patched["updatedAt"]?.stringValue ?? "") > "2999-01-01T00:00:00.000Z", "stamps pass the table's newest")
                let all = try await client.send(.get, server.url, "/tables/todo?$filter=" + ODataQuery.encode("id eq 'ONE' or id eq 'TWO'")).array
                #expect(all.count == 2)
            } catch {
                Issue.record(error)
            }
            try await client.shutdown()
            await server.stop()
        }
    }

    @Test func aFileWithIDsDifferingOnlyByCaseIsRefusedAndLeftAsItWas() async throws {
        let directory = try TemporaryDirectory(prefix: "legacy")
        defer { directory.remove() }
        let path = directory.path("server.db")
        try await Self.makeLegacyFile(path, ids: ["ONE", "one", "x", "X", "y"])
        do {
            let storage = try await SQLiteTableStorage.open(.sqlite(path: path), logger: .quiet)
            try await storage.close()
            Issue.record("a file with ids differing only by case opened")
        } catch let error as TableStorageError {
            #expect(error == .idsDifferingOnlyByCase && error.table == "todo" && error.count == 2)
            #expect("\(error)".contains("'todo'") && "\(error)".contains("2 groups"))
        }
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        let ids = try await connection.query(#"SELECT "id" FROM "todo" ORDER BY "id""#, []).compactMap { $0.column("id")?.string }
        let schema = try await connection.query("SELECT sql FROM sqlite_master WHERE name = 'todo'", []).first?.column("sql")?.string
        try await connection.close()
        #expect(ids == ["ONE", "X", "one", "x", "y"])
        #expect(schema?.contains("NOCASE") == false, "the table was not rebuilt")

        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let refused = try runProgram(ServerProcess.tool.url.path, ["--port", "0", "--database", "sqlite:" + path])
        #expect(refused.status != 0)
        #expect(refused.error.contains("The table 'todo' holds 2 groups of ids that differ only by ASCII case"), "\(refused.error)")
        #expect(refused.output.isEmpty, "it never listened")
    }
}
