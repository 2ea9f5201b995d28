import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The in-flight rule (docs/protocol.md §1.3): a local edit made while its item's request is on the
/// wire is never overwritten by the answer, and is pushed by the next push.
@Suite struct InFlightTests {
    /// Scripts one answer that waits for `gate`, then echoes the request with `version`.
    func enqueueHeldEcho(_ f: ClientFixture, gate: AsyncGate, status: Int = 200, version: String) {
        f.transport.enqueue { request in
            await gate.wait()
            var item = request.jsonObject ?? ["id": "a"]
            item["version"] = .string(version)
            item["updatedAt"] = "2002-02-02T00:00:00.000Z"
            return SyncResponse(statusCode: status, body: try JSONCoding.encode(item))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateDuringAnInFlightUpdateIsKeptAndPushedNext(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await f.store.upsert(table: "todo", items: [todo("a", "v1 text", version: "1")])
            try await table.update(todo("a", "first edit"))
            let gate = AsyncGate()
            enqueueHeldEcho(f, gate: gate, version: "2")
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            try await table.update(todo("a", "second edit"))  // while the PATCH is on the wire
            gate.open()
            try await push.value
            // the answer did not overwrite the newer edit, but its version was taken
            let row = try #require(try await f.row("a"))
            #expect(row["text"] == "second edit")
            #expect(row["version"] == "2")
            let pending = try await f.operations()
            #expect(pending.map(\.kind) == [.update])
            #expect(pending.first?.state == .pending)
            // the next push sends one PATCH with the latest value over the new version
            f.transport.enqueueEcho(status: 200, version: "3")
            try await f.context.push()
            let last = try #require(f.transport.requests.last)
            #expect(f.transport.requests.count == 2)
            #expect(last.line == "PATCH /app/tables/todo/a")
            #expect(last.jsonObject?["text"] == "second edit")
            #expect(last.header("If-Match") == "\"2\"")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUpdateDuringAnInFlightInsertBecomesAnUpdate(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "created"))
            let gate = AsyncGate()
            enqueueHeldEcho(f, gate: gate, status: 201, version: "1")
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            try await table.update(todo("a", "edited in flight"))
            gate.open()
            try await push.value
            #expect(try await f.row("a")?["text"] == "edited in flight")
            #expect(try await f.operations().map(\.kind) == [.update])
            f.transport.enqueueEcho(status: 200, version: "2")
            try await f.context.push()
            let last = try #require(f.transport.requests.last)
            #expect(last.line == "PATCH /app/tables/todo/a")  // not a second POST (which would be a 409)
            #expect(last.header("If-Match") == "\"1\"")
            #expect(last.jsonObject?["text"] == "edited in flight")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDeleteDuringAnInFlightInsertIsRefusedThenSentAfterwards(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "created"))
            let gate = AsyncGate()
            enqueueHeldEcho(f, gate: gate, status: 201, version: "1")
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            // The insert may already be on the server: it cannot be cancelled, push first.
            await #expect(throws: SyncError.operationNotAllowed) { try await table.delete(id: "a") }
            gate.open()
            try await push.value
            #expect(try await f.row("a")?["version"] == "1")
            try await table.delete(id: "a")
            #expect(try await f.row("a") == nil)
            let pending = try await f.operations()
            #expect(pending.map(\.kind) == [.delete])
            #expect(pending.first?.item?["version"] == "1")
            f.transport.enqueue(status: 200)
            try await f.context.push()
            let last = try #require(f.transport.requests.last)
            #expect(last.line == "DELETE /app/tables/todo/a")
            #expect(last.header("If-Match") == "\"1\"")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFailureOfAnOperationChangedInFlightIsNotRecorded(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await f.store.upsert(table: "todo", items: [todo("a", "base", version: "1")])
            try await table.update(todo("a", "first"))
            let gate = AsyncGate()
            f.transport.enqueue { _ in
                await gate.wait()
                return SyncResponse(statusCode: 500, body: Data("{\"error\":\"x\"}".utf8))
            }
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            try await table.update(todo("a", "second"))
            gate.open()
            try await push.value  // the failed content is stale: the next push sends the new one
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.operations().map(\.kind) == [.update])
            #expect(try await f.row("a")?["text"] == "second")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func pushesDoNotOverlap(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "one"))
            let gate = AsyncGate()
            enqueueHeldEcho(f, gate: gate, status: 201, version: "1")
            let first = Task { try await f.context.push() }
            await f.transport.waitForRequests(1)
            let second = Task { try await f.context.push() }
            gate.open()
            try await first.value
            try await second.value
            // the second push waited for the first and found nothing left to send
            #expect(f.transport.requests.count == 1)
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }
}
