import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// An operation that may already have reached the server (sent, and no answer recorded: a crash,
/// no answer, a 408 or a 5xx) and is then answered 409 or 412 with the server's copy of what was
/// sent settles as a success: it takes the server's version and timestamps. Only a real
/// difference is a conflict.
@Suite struct CrashSafePushTests {
    static let stamp = "2011-11-11T11:11:11.111Z"

    /// The server's copy of `a` after it applied the request: the same user values, spelled as a
    /// server spells them (id in another case, `1.0` for `1`, a null column another device added).
    static func storedCopy(text: String, version: String) -> JSONObject {
        [
            "id": "A", "text": .string(text), "count": .double(1), "note": nil, "version": .string(version),
            "createdAt": .string(stamp), "updatedAt": .string(stamp), "deleted": false,
        ]
    }

    /// How a first attempt can end without a recorded outcome, leaving the item maybe on the server.
    enum FirstAttempt: String, CaseIterable, CustomStringConvertible {
        case noAnswer, timeout408, error500, error503
        var description: String { rawValue }

        func enqueue(_ transport: FakeSyncTransport) {
            switch self {
            case .noAnswer: transport.enqueueNetworkError()
            case .timeout408: transport.enqueue(status: 408, json: ["error": "Request Timeout"])
            case .error500: transport.enqueue(status: 500, json: ["error": "internal"])
            case .error503: transport.enqueue(status: 503, json: ["error": "unavailable"])
            }
        }
    }

    @Test(arguments: StoreKind.allCases, [409, 412])
    func anInsertThatReachedTheServerBeforeACrashSettlesAsSuccess(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(["id": "a", "text": "milk", "count": 1])
            f.transport.enqueueNetworkError()  // the POST was applied; its answer never arrived
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            let restarted = try await f.reopen()
            restarted.transport.enqueue(
                status: status, json: .object(Self.storedCopy(text: "milk", version: "v7")), headers: ["ETag": "\"v7\""])
            try await restarted.context.push()
            #expect(try await restarted.context.pendingOperationsCount == 0)
            #expect(try await restarted.storedErrors().isEmpty)
            let row = try #require(try await restarted.row("a"))
            #expect(row["id"] == "a", "the spelling first written is kept")
            #expect(row["version"] == "v7" && row["updatedAt"] == .string(Self.stamp) && row["createdAt"] == .string(Self.stamp))
            #expect(row["text"] == "milk")
            #expect(restarted.transport.requests.map(\.line) == ["POST /app/tables/todo", "POST /app/tables/todo"])
            try await restarted.store.close()
        }
    }

    @Test(arguments: StoreKind.allCases, FirstAttempt.allCases)
    func anInsertWithoutARecordedOutcomeSettlesWhenTheServerHasIt(kind: StoreKind, first: FirstAttempt) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(["id": "a", "text": "milk", "count": 1])
            first.enqueue(f.transport)
            await #expect(throws: SyncError.self) { try await f.context.push() }
            f.transport.enqueue(status: 409, json: .object(Self.storedCopy(text: "milk", version: "v2")))
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a")?["version"] == "v2")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateThatReachedTheServerSettlesOnTheFailedPrecondition(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [["id": "a", "text": "milk", "count": 1, "version": "v1"]])
            try await f.table().update(["id": "a", "text": "oat milk", "count": 1, "version": "v1"])
            f.transport.enqueueNetworkError()  // the PATCH was applied: the server is at v2 now
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            f.transport.enqueue(status: 412, json: .object(Self.storedCopy(text: "oat milk", version: "v2")))
            try await f.context.push()
            #expect(f.transport.requests.map { $0.header("If-Match") } == ["\"v1\"", "\"v1\""])
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a")?["version"] == "v2")
            #expect(try await f.row("a")?["text"] == "oat milk")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDeleteThatReachedTheServerSettlesOnTheDeletedCopy(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "milk", version: "v1")])
            try await f.table().delete(id: "a")
            f.transport.enqueueNetworkError()
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            var deleted = todo("a", "milk", version: "v2")
            deleted["deleted"] = true
            f.transport.enqueue(status: 412, json: .object(deleted))
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a") == nil)
        }
    }

    /// A real difference stays a conflict, also for an operation that may have reached the server.
    @Test(
        arguments: StoreKind.allCases,
        [
            ["text": "milk", "count": 2] as JSONObject,  // a value differs
            ["text": "milk", "count": 1, "note": "from another device"],  // a property the client never sent
            ["text": "milk"],  // a property the client sent is missing
            ["text": "Milk", "count": 1],  // text compares exactly
        ])
    func aRealDifferenceIsAConflict(kind: StoreKind, server: JSONObject) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(["id": "a", "text": "milk", "count": 1])
            f.transport.enqueueNetworkError()
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            var copy = server
            copy["id"] = "a"
            copy["version"] = "v9"
            f.transport.enqueue(status: 409, json: .object(copy))
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.first?.isConflict == true)
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    /// An operation never sent before cannot have reached the server: an equal copy there is
    /// another device's item, and a 409 stays a conflict.
    @Test(arguments: StoreKind.allCases)
    func aFirstAttemptAnswered409IsAConflictEvenWithEqualValues(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(["id": "a", "text": "milk", "count": 1])
            f.transport.enqueue(status: 409, json: .object(Self.storedCopy(text: "milk", version: "v7")))
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }
}
