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
    /// The rows `sql` returns through a connection of its own to the file.
    static func outside(_ path: String, _ sql: String) async throws -> [SQLiteRow] {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: .quiet)
        // Closed through the future, which runs whether or not this task was cancelled (a failed
        // sibling, the time limit): the async close, cancelled before its turn on the thread
        // pool, never runs, and a connection dropped open stops the process (sqlite-nio).
        let rows: [SQLiteRow]
        do {
            rows = try await connection.query(sql, [])
        } catch {
            try? await connection.close().get()
            throw error
        }
        try await connection.close().get()
        return rows
    }

    /// The rows of `todo` another connection sees in the file.
    static func committedCount(_ path: String) async throws -> Int {
        try await outside(path, #"SELECT count(*) AS n FROM "todo""#).first?.column("n")?.integer ?? -1
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

    @Test func aWriteIsAcknowledgedOnlyWhenItsWholeGroupCommits() async throws {
        try await Self.withFile(["text": .text, "n": .integer]) { storage, path in
            // An insert of the text "boom" rolls back the whole transaction it runs in: the group
            // fails, and every write that ran in it before must fail too, never be acknowledged.
            _ = try await Self.outside(
                path, #"CREATE TRIGGER "boom" BEFORE INSERT ON "todo" WHEN NEW."text" = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'boom'); END"#)
            var acknowledged: Set<String> = [], refused: Set<String> = []
            var rounds = 0
            // Rounds of five writes and a failing one at once, until a group held both (the
            // invariant below is checked whatever happened).
            for round in 1...50 where refused.isEmpty {
                rounds = round
                let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                    for index in 0..<5 {
                        let id = "r\(round)-\(index)"
                        group.addTask {
                            let result: WriteResult
                            do {
                                result = try await storage.insert(table: "todo", scope: .shared, item: Self.item(id, index))
                            } catch {
                                return (id, false)
                            }
                            guard case .written = result else { throw UnexpectedResult(description: "\(id): \(result)") }
                            return (id, true)
                        }
                    }
                    group.addTask {
                        let boom: JSONObject = [SystemProperty.id: .string("boom-\(round)"), "text": .string("boom")]
                        let failed = (try? await storage.insert(table: "todo", scope: .shared, item: boom)) == nil
                        return ("boom-\(round)", !failed)
                    }
                    return try await group.reduce(into: [(String, Bool)]()) { $0.append($1) }
                }
                for (id, written) in outcomes where id.hasPrefix("boom") { #expect(!written, "\(id) was acknowledged") }
                for (id, written) in outcomes where !id.hasPrefix("boom") {
                    if written { acknowledged.insert(id) } else { refused.insert(id) }
                }
            }
            let stored = try await Self.outside(path, #"SELECT "id" FROM "todo""#).compactMap { $0.column("id")?.string }
            #expect(
                Set(stored) == acknowledged,
                "refused, stored: \(refused.intersection(stored)); acknowledged, not stored: \(acknowledged.subtracting(stored))")
            #expect(!refused.isEmpty, "in \(rounds) rounds no write shared a group with a failing one")
        }
    }

    struct UnexpectedResult: Error, CustomStringConvertible { let description: String }

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
