import Foundation
import SyncServer
import SyncWire
import Testing

/// A table made inside a transaction of several writes (PostgreSQL's `inTransaction`) is that
/// transaction's until it commits: another task of the same instance neither sees it nor writes
/// to it meanwhile (the table is not there for it yet), sees it once it committed, and never
/// sees one that was rolled back.
@Suite(.timeLimit(.minutes(2))) struct UncommittedSchemaTests {
    @Test func aTableMadeInATransactionIsUnknownToOtherTasksUntilItCommits() async throws {
        try await Self.withStorage { storage in
            let made = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let maker = Task {
                try await storage.inTransaction {
                    _ = try await storage.ensureColumns("photos", scope: .owner("ann"), ["name": .text])
                    let first = try await storage.insert(table: "photos", scope: .owner("ann"), item: ["id": "first", "name": "a"])
                    guard case .written = first else { throw Unexpected(result: "\(first)") }
                    made.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            // The maker's transaction ends however this test goes on.
            defer { release.continuation.finish() }
            for await _ in made.stream { break }
            // Inside the transaction the table is there; outside it, not yet.
            let seen = try await storage.schema(of: "photos")
            let early = try await storage.insert(table: "photos", scope: .owner("bob"), item: ["id": "early", "name": "b"])
            release.continuation.finish()
            try await maker.value
            #expect(seen == nil, "a table not committed is unknown outside its transaction")
            guard case .missing = early else {
                Issue.record("an insert into a table not committed yet: \(early)")
                return
            }
            let schema = try #require(try await storage.schema(of: "photos"), "the committed table is known")
            #expect(schema.columns["name"] == .text && schema.isPerUser)
            let second = try await storage.insert(table: "photos", scope: .owner("bob"), item: ["id": "second", "name": "b"])
            guard case .written(let row) = second else {
                Issue.record("an insert into the committed table: \(second)")
                return
            }
            #expect(row["name"] == "b")
            #expect(try await storage.row(table: "photos", id: "first", scope: .owner("ann"))?["name"] == "a")
        }
    }

    @Test func aTableMadeInATransactionThatRolledBackIsUnknown() async throws {
        try await Self.withStorage { storage in
            await #expect(throws: Unexpected.self) {
                try await storage.inTransaction {
                    _ = try await storage.ensureColumns("drafts", scope: .shared, ["text": .text])
                    _ = try await storage.insert(table: "drafts", scope: .shared, item: ["id": "d", "text": "x"])
                    #expect(try await storage.schema(of: "drafts") != nil, "the transaction sees the table it made")
                    throw Unexpected(result: "rolled back")
                }
            }
            #expect(try await storage.schema(of: "drafts") == nil)
            #expect(try await storage.tables().allSatisfy { $0.name != "drafts" })
            let result = try await storage.insert(table: "drafts", scope: .shared, item: ["id": "d", "text": "x"])
            guard case .missing = result else {
                Issue.record("an insert into a table rolled back: \(result)")
                return
            }
            _ = try await storage.ensureColumns("drafts", scope: .shared, ["text": .text])
            guard case .written = try await storage.insert(table: "drafts", scope: .shared, item: ["id": "d", "text": "x"]) else {
                Issue.record("the table made again takes the row")
                return
            }
        }
    }

    /// A result or failure the test did not expect.
    struct Unexpected: Error {
        let result: String
    }

    /// Runs `body` over a PostgreSQL storage of a new database, closed and dropped afterwards.
    static func withStorage(_ body: (PostgresTableStorage) async throws -> Void) async throws {
        let settings = try await PostgresTestDatabases.create()
        var failure: (any Error)?
        do {
            let storage = try await PostgresTableStorage.open(settings, logger: .quiet)
            do { try await body(storage) } catch { failure = error }
            try await storage.close()
        } catch {
            failure = failure ?? error
        }
        try await PostgresTestDatabases.drop(settings)
        if let failure { throw failure }
    }
}
