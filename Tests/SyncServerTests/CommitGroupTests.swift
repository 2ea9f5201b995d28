import Foundation
import Logging
import SQLiteNIO
import SyncSQL
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// Single writes to a file share commits (`CommitGroup`): a write is acknowledged only once the
/// transaction it ran in has committed, whatever the writes beside it do. Checked from outside,
/// through a connection of its own to the same file, which sees committed rows only.
@Suite(.timeLimit(.minutes(2))) struct CommitGroupTests {
    /// The rows of `todo` another connection sees in the file.
    static func committedCount(_ path: String) async throws -> Int {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        let rows: [SQLiteRow]
        do {
            rows = try await connection.query(#"SELECT count(*) AS n FROM "todo""#, [])
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return rows.first?.column("n")?.integer ?? -1
    }

    /// Runs `body` with a storage over a new file whose table `todo` has `columns`, and the file's path.
    static func withFile(_ columns: [String: ColumnType], _ body: (SQLiteTableStorage, String) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "groups")
        defer { directory.remove() }
        let path = directory.path("server.db")
        let storage = try await SQLiteTableStorage.open(.sqlite(path: path), logger: .quiet)
        _ = try await storage.ensureColumns("todo", scope: .shared, columns)
        do {
            try await body(storage, path)
        } catch {
            try? await storage.close()
            throw error
        }
        try await storage.close()
    }

    static func item(_ id: String, _ n: Int) -> JSONObject {
        [SystemProperty.id: .string(id), "text": .string("item \(n)"), "n": .int(Int64(n))]
    }

    @Test func everyWriteOfConcurrentWritersIsCommittedWhenItIsAcknowledged() async throws {
        try await Self.withFile(["text": .text, "n": .integer]) { storage, path in
            let writers = 4, each = 15
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for index in 0..<each {
                            let result = try await storage.insert(table: "todo", scope: .shared, item: Self.item("w\(writer)-\(index)", index))
                            guard case .written = result else {
                                Issue.record("insert w\(writer)-\(index): \(result)")
                                return
                            }
                            // Acknowledged: committed, so another connection sees this writer's rows so far.
                            let seen = try await Self.committedCount(path)
                            #expect(seen >= index + 1, "after w\(writer)-\(index) another connection saw \(seen) rows")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await Self.committedCount(path) == writers * each)
        }
    }

    @Test func aWriteWhoseStatementFailsLeavesNoGroupOpen() async throws {
        try await Self.withFile(["text": .text]) { storage, path in
            // A column the table lacks (the service adds columns first; the storage alone refuses it):
            // the first write of a group fails in its statement.
            await #expect(throws: (any Error).self) {
                try await storage.insert(table: "todo", scope: .shared, item: [SystemProperty.id: .string("bad"), "missing": .string("x")])
            }
            // The next write opens its own group, and it commits.
            let result = try await storage.insert(table: "todo", scope: .shared, item: [SystemProperty.id: .string("good"), "text": .string("x")])
            guard case .written = result else {
                Issue.record("insert good: \(result)")
                return
            }
            #expect(try await Self.committedCount(path) == 1)
        }
    }

    @Test func aBatchAfterSingleWritesCommitsThemFirst() async throws {
        try await Self.withFile(["text": .text, "n": .integer]) { storage, path in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<10 {
                    group.addTask { _ = try await storage.insert(table: "todo", scope: .shared, item: Self.item("single-\(index)", index)) }
                }
                group.addTask {
                    let ids = (0..<10).map { "batch-\($0)" }
                    try await storage.inTransaction(table: "todo", scope: .shared, ids: ids) {
                        for (index, id) in ids.enumerated() {
                            _ = try await storage.insert(table: "todo", scope: .shared, item: Self.item(id, index))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await Self.committedCount(path) == 20)
            let rows = try await storage.select(QueryDescription(table: "todo"), scope: .shared, extraFilter: nil)
            #expect(rows.count == 20)
        }
    }
}
