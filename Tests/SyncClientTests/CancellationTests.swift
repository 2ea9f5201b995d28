import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Cancelling a push or a pull (explicitly or through the task), and push progress events.
@Suite struct CancellationTests {
    /// Scripts an answer that waits for `gate` and then succeeds.
    static func heldAnswer(_ f: ClientFixture, _ gate: AsyncGate, status: Int = 201, body: JSONValue) {
        let data = (try? JSONCoding.encode(body)) ?? Data()
        f.transport.enqueue { _ in
            await gate.wait()
            return SyncResponse(statusCode: status, body: data)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anExplicitCancelEndsThePushAndKeepsTheRest(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "1"))
            try await f.table().insert(todo("b", "2"))
            let gate = AsyncGate()
            Self.heldAnswer(f, gate, body: .object(todo("a", "1", version: "1")))
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            f.context.cancel()
            gate.open()
            await #expect(throws: SyncError.pushCancelled) { try await push.value }
            #expect(f.transport.requests.count == 1)  // "b" was never sent
            #expect(try await f.operations().map(\.itemId).contains("b"))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheTaskCancelsThePush(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "1"))
            let gate = AsyncGate()
            Self.heldAnswer(f, gate, body: .object(todo("a", "1", version: "1")))
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            push.cancel()
            gate.open()
            await #expect(throws: SyncError.pushCancelled) { try await push.value }
            #expect(try await f.storedErrors().isEmpty)
            // nothing is lost: a new push sends what is left
            let left = try await f.context.pendingOperationsCount
            for _ in 0..<left { f.transport.enqueueEcho() }
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anExplicitCancelEndsThePullBetweenPages(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let gate = AsyncGate()
            Self.heldAnswer(f, gate, status: 200, body: .array([.object(serverItem("a", "x", updatedAt: "2001-01-01T00:00:00.000Z"))]))
            let table = try f.table()
            let pull = Task { try await table.pull(queryId: "q") }
            await f.transport.waitForRequests(1)
            f.context.cancel()
            gate.open()
            await #expect(throws: SyncError.pullCancelled) { try await pull.value }
            #expect(f.transport.requests.count == 1)
            #expect(try await f.rows().isEmpty)  // the answer that arrived after the cancel is not applied
            #expect(try await f.config("deltaToken|todo|q") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cancelWithNothingRunningDoesNotAffectTheNextRun(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.context.cancel()
            try await f.table().insert(todo("a", "1"))
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func pushReportsProgress(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let events = await f.context.events()
            try await f.table().insert(todo("a", "1"))
            try await f.table().insert(todo("b", "2"))
            f.transport.enqueueEcho()
            f.transport.enqueue(status: 500)
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            var seen: [SyncEvent] = []
            for await event in events {
                seen.append(event)
                if case .pushFinished = event { break }
            }
            #expect(
                seen == [
                    .pushStarted(operations: 2),
                    .operationPushed(table: "todo", itemId: "a", kind: .insert, succeeded: true),
                    .operationPushed(table: "todo", itemId: "b", kind: .insert, succeeded: false),
                    .pushFinished(succeeded: 1, failed: 1),
                ])
        }
    }
}
