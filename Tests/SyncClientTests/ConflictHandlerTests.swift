import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// The conflict handler hooks of docs/protocol.md §1.4.3: use client, use server, cancel; and the
/// end-of-push hook. Case 22.
@Suite struct ConflictHandlerTests {
    enum Policy: Sendable { case client, server, cancel }

    /// Resolves 409/412 by a fixed policy and counts the operations it saw.
    final class PolicyHandler: SyncConflictHandler {
        let policy: Policy
        let seen = Mutex<[String]>([])
        init(_ policy: Policy) { self.policy = policy }

        func execute(_ operation: PushOperation) async throws -> JSONObject? {
            seen.withLock { $0.append(operation.itemId) }
            do {
                return try await operation.execute()
            } catch let error as SyncError where error.isConflict {
                guard let server = error.serverItem else { throw error }
                switch policy {
                case .client:
                    operation.item["version"] = server["version"]
                    return try await operation.execute()
                case .server:
                    return server
                case .cancel:
                    operation.cancelPush()
                    throw error
                }
            }
        }
    }

    // Case 22
    @Test(arguments: StoreKind.allCases)
    func clientWinsRetriesWithTheServerVersion(kind: StoreKind) async throws {
        let handler = PolicyHandler(.client)
        try await withClient(kind, handler: handler) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "mine", version: "1")])
            try await f.table().update(todo("a", "mine!"))
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "theirs", "version": "2"])
            f.transport.enqueueEcho(status: 200, version: "3")
            try await f.context.push()
            #expect(f.transport.requests.map { $0.header("If-Match") } == ["\"1\"", "\"2\""])
            #expect(f.transport.requests.map { $0.jsonObject?["text"] } == ["mine!", "mine!"])
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("a")?["version"] == "3")
            #expect(try await f.row("a")?["text"] == "mine!")
            #expect(try await f.storedErrors().isEmpty)
            #expect(handler.seen.withLock { $0 } == ["a"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func serverWinsStoresTheServerItemAndDropsTheOperation(kind: StoreKind) async throws {
        try await withClient(kind, handler: PolicyHandler(.server)) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "mine", version: "1")])
            try await f.table().update(todo("a", "mine!"))
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "theirs", "version": "2"])
            try await f.context.push()
            #expect(f.transport.requests.count == 1)
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("a")?["text"] == "theirs")
            #expect(try await f.row("a")?["version"] == "2")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func serverWinsOnADeleteBringsTheItemBack(kind: StoreKind) async throws {
        try await withClient(kind, handler: PolicyHandler(.server)) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "mine", version: "1")])
            try await f.table().delete(id: "a")
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "edited elsewhere", "version": "2"])
            try await f.context.push()
            #expect(try await f.row("a")?["text"] == "edited elsewhere")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cancelEndsThePushAndKeepsTheOperation(kind: StoreKind) async throws {
        try await withClient(kind, handler: PolicyHandler(.cancel)) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            f.transport.enqueue(status: 409, json: ["id": "a", "text": "theirs", "version": "2"])
            await #expect(throws: SyncError.pushCancelled) { try await f.context.push() }
            #expect(f.transport.requests.count == 1)
            #expect(try await f.operations().map(\.itemId) == ["a", "b"])
            #expect(try await f.storedErrors().isEmpty)
        }
    }

    /// Resolves every error at the end of the push by taking the server's item.
    struct ResolveAtEnd: SyncConflictHandler {
        func pushDidComplete(with errors: [TableOperationError]) async {
            for error in errors {
                if let server = error.serverItem { try? await error.cancelAndUpdate(server) }
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func errorsResolvedAtTheEndOfThePushAreNotReported(kind: StoreKind) async throws {
        try await withClient(kind, handler: ResolveAtEnd()) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            f.transport.enqueue(status: 409, json: ["id": "a", "text": "theirs", "version": "9"])
            f.transport.enqueue(status: 500, json: ["error": "internal"])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.map(\.itemId) == ["b"])
            #expect(try await f.row("a")?["text"] == "theirs")
            #expect(try await f.operations().map(\.itemId) == ["b"])
        }
    }

    /// A handler that throws its own error: recorded like any other failure.
    struct Refuse: SyncConflictHandler {
        struct Refused: Error {}
        func execute(_ operation: PushOperation) async throws -> JSONObject? { throw Refused() }
    }

    @Test(arguments: StoreKind.allCases)
    func aHandlerErrorIsRecordedAndThePushGoesOn(kind: StoreKind) async throws {
        try await withClient(kind, handler: Refuse()) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error.operationErrors.map(\.itemId) == ["a", "b"])
            #expect(error.operationErrors.allSatisfy { $0.statusCode == nil })
            #expect(f.transport.requests.isEmpty)
        }
    }
}
