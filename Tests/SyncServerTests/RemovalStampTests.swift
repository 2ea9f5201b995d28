import Foundation
import SyncSQL
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// A hard delete leaves its stamp behind: the storage records it per scope, in the delete's
/// transaction, so a change stream's position (the newest stamp of its scope) moves on a delete
/// without counting rows — also read back after the storage is opened again, and the next write
/// stamps past it. Another owner's scope is untouched.
@Suite(.timeLimit(.minutes(2))) struct RemovalStampTests {
    enum Engine: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    @Test(arguments: Engine.allCases) func aHardDeleteRecordsItsStampPerScopeAndTheNextWriteStampsPastIt(_ engine: Engine) async throws {
        let directory = try TemporaryDirectory(prefix: "removals")
        defer { directory.remove() }
        let settings = engine == .postgres ? try await PostgresTestDatabases.create() : nil
        let open: () async throws -> any TableStorage = {
            if let settings { return try await PostgresTableStorage.open(settings, logger: .quiet) }
            return try await SQLiteTableStorage.open(.sqlite(path: directory.path("server.db")), logger: .quiet)
        }
        var failure: (any Error)?
        do {
            let storage = try await open()
            _ = try await storage.ensureColumns("todo", scope: .shared, ["text": .text])
            let first = try Self.stamp(try await storage.insert(table: "todo", scope: .shared, item: ["id": "a", "text": "x"]))
            let second = try Self.stamp(try await storage.insert(table: "todo", scope: .shared, item: ["id": "b", "text": "y"]))
            #expect(try await storage.removalStamp(of: "todo", scope: .shared) == nil)
            _ = try await storage.delete(table: "todo", id: "a", scope: .shared, condition: WriteCondition())
            let removal = try #require(try await storage.removalStamp(of: "todo", scope: .shared))
            #expect(removal > second && second > first)
            #expect(try await storage.newestStamps(of: "todo", scopes: [.shared]) == [.shared: removal])
            // A delete whose row is missing records nothing.
            _ = try await storage.delete(table: "todo", id: "nothing", scope: .shared, condition: WriteCondition())
            #expect(try await storage.removalStamp(of: "todo", scope: .shared) == removal)

            _ = try await storage.ensureColumns("notes", scope: .owner("alice"), ["text": .text])
            _ = try await storage.insert(table: "notes", scope: .owner("alice"), item: ["id": "n", "text": "a"])
            let bobs = try Self.stamp(try await storage.insert(table: "notes", scope: .owner("bob"), item: ["id": "n", "text": "b"]))
            _ = try await storage.delete(table: "notes", id: "n", scope: .owner("alice"), condition: WriteCondition())
            let alices = try #require(try await storage.removalStamp(of: "notes", scope: .owner("alice")))
            #expect(try await storage.removalStamp(of: "notes", scope: .owner("bob")) == nil)
            #expect(alices > bobs, "the delete took a stamp of its own")
            let stamps = try await storage.newestStamps(of: "notes", scopes: [.owner("alice"), .owner("bob"), .owner("carol")])
            #expect(stamps == [.owner("alice"): alices, .owner("bob"): bobs])
            try await storage.close()

            let reopened = try await open()
            #expect(try await reopened.removalStamp(of: "todo", scope: .shared) == removal)
            let third = try Self.stamp(try await reopened.insert(table: "todo", scope: .shared, item: ["id": "c", "text": "z"]))
            #expect(third > removal, "the next write stamps past the delete")
            #expect(try await reopened.newestStamps(of: "todo", scopes: [.shared]) == [.shared: third])
            try await reopened.close()
        } catch {
            failure = error
        }
        if let settings { try? await PostgresTestDatabases.drop(settings) }
        if let failure { throw failure }
    }

    /// The `updatedAt` of a write that happened.
    static func stamp(_ result: WriteResult) throws -> String {
        guard case .written(let row) = result, let stamp = row[SystemProperty.updatedAt]?.stringValue else {
            throw Unexpected(result: result)
        }
        return stamp
    }

    struct Unexpected: Error {
        let result: WriteResult
    }
}
