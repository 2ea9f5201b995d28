import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A 409 without `version` for an item the server has deleted, on a backend whose read by id
/// ignores `__includeDeleted` (the Node server of Azure Mobile Apps): the push finds the deleted
/// copy through a filtered read, so "restore" restores it; and no resolution can send the
/// refused request again unchanged, so no choice loops.
@Suite struct DeletedOnNodeServerTests {
    /// Before, the 404 of the read by id recorded the conflict as "missing on the server", and
    /// "use client" re-queued the same POST: POST, 409, GET, 404, forever.
    @Test(arguments: StoreKind.allCases)
    func anInsertOfAnItemTheServerDeletedIsRestored(kind: StoreKind) async throws {
        try await withNodeLikeClient(kind) { n in
            n.backend.put("a", "theirs")
            n.backend.put("a", "theirs", deleted: true)  // version 2, deleted
            try await n.table().insert(todo("a", "mine"))
            let error = try await #require(throws: SyncError.self) { try await n.context.push() }
            #expect(n.lines == ["POST /app/tables/todo", "GET /app/tables/todo/a", "GET /app/tables/todo"])
            #expect(n.backend.requests.last?.queryValue("$filter") == "id eq 'a'")
            #expect(n.backend.requests.last?.queryValue("__includeDeleted") == "true")
            let failure = try #require(error.operationErrors.first)
            #expect(failure.conflict == .deletedOnServer)
            #expect(failure.statusCode == 409)
            #expect(failure.serverItem?["version"] == "2")

            try await failure.keepLocalChange()  // restore
            #expect(n.lines.last == "POST /app/tables/todo/a")
            #expect(n.backend.requests.last?.header("If-Match") == "\"2\"")
            try await n.context.push()
            #expect(n.lines.last == "PATCH /app/tables/todo/a")
            #expect(n.backend.item("a")?.deleted == false)
            #expect(n.backend.item("a")?.values["text"] == "mine")
            #expect(try await n.context.pendingOperationsCount == 0)
            #expect(n.backend.requests.count == 5, "no request repeats")
        }
    }

    /// The server refuses the insert (409) and no read shows the item (another user's): "use
    /// client" would send the same POST again, to the same refusal. It is refused with a typed
    /// error and changes nothing; accepting the delete settles it.
    @Test(arguments: StoreKind.allCases)
    func keepingAnInsertTheServerRefusesWithoutShowingTheItemIsRefused(kind: StoreKind) async throws {
        try await withNodeLikeClient(kind) { n in
            n.backend.put("a", "someone else's", hidden: true)
            try await n.table().insert(todo("a", "mine"))
            let error = try await #require(throws: SyncError.self) { try await n.context.push() }
            let failure = try #require(error.operationErrors.first)
            #expect(failure.conflict == .missingOnServer)
            let sent = n.backend.requests.count
            let operations = try await n.context.pendingOperations()
            await #expect(throws: SyncError.resolutionWouldRepeat) { try await failure.keepLocalChange() }
            await #expect(throws: SyncError.resolutionWouldRepeat) { try await failure.keepAndUpdate(todo("a", "mine")) }
            #expect(n.backend.requests.count == sent, "nothing is sent")
            #expect(try await n.context.pendingOperations() == operations, "the queue is unchanged")
            #expect(try await n.context.operationErrors().count == 1)
            // A changed item is another request: allowed.
            try await failure.keepAndUpdate(todo("a", "mine, edited"))
            #expect(try await n.context.pendingOperations().map(\.kind) == [.insert])
            let again = try await #require(throws: SyncError.self) { try await n.context.push() }
            try await #require(again.operationErrors.first).acceptDelete()
            #expect(try await n.context.pendingOperationsCount == 0)
            #expect(try await n.rows().isEmpty)
        }
    }

    /// "Use client" applied by a policy after every push ends: each round sends different
    /// requests until the change lands, or the policy meets the typed error; it never sends the
    /// same round twice.
    @Test(arguments: StoreKind.allCases)
    func aUseClientPolicyEnds(kind: StoreKind) async throws {
        try await withNodeLikeClient(kind) { n in
            n.backend.put("a", "theirs")
            n.backend.put("a", "theirs", deleted: true)
            n.backend.put("b", "hidden", hidden: true)
            try await n.table().insert(todo("a", "mine"))
            try await n.table().insert(todo("b", "mine too"))
            var rounds = 0
            var refused = 0
            while try await n.context.pendingOperationsCount > 0, rounds < 5 {
                rounds += 1
                do {
                    try await n.context.push()
                } catch let error as SyncError where error == .pushCompletedWithErrors {
                    for failure in error.operationErrors {
                        do { try await failure.keepLocalChange() } catch SyncError.resolutionWouldRepeat {
                            refused += 1
                            try await failure.acceptDelete()
                        }
                    }
                }
            }
            #expect(rounds == 2)
            #expect(refused == 1, "b's insert would repeat")
            #expect(n.backend.item("a")?.values["text"] == "mine")
            #expect(try await n.context.pendingOperationsCount == 0)
        }
    }
}

/// The bound on resolutions against a scripted transport: a restore whose undelete finds nothing
/// would queue the refused insert again.
@Suite struct RepeatedResolutionTests {
    @Test(arguments: StoreKind.allCases)
    func aRestoreThatWouldRequeueTheRefusedInsertIsRefused(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "mine"))
            f.transport.enqueue(status: 409, json: ["id": "a", "text": "mine"])
            f.transport.enqueue(status: 404, json: ["error": "Not Found"])
            var gone = todo("a", "theirs", version: "2")
            gone["deleted"] = true
            f.transport.enqueuePage([gone])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            let failure = try #require(error.operationErrors.first)
            #expect(failure.conflict == .deletedOnServer)
            let operations = try await f.operations()
            f.transport.enqueue(status: 404, json: ["error": "Not Found"])  // the undelete finds nothing
            await #expect(throws: SyncError.resolutionWouldRepeat) { try await failure.restoreAndUpdate() }
            #expect(f.transport.requests.last?.line == "POST /app/tables/todo/a")
            #expect(try await f.operations() == operations)
            #expect(try await f.storedErrors().count == 1)
            #expect(try await f.row("a")?["text"] == "mine")
        }
    }

    /// A change on the server: "use client" with the server's version is a new request; the same
    /// item and version again is refused.
    @Test(arguments: StoreKind.allCases)
    func keepingTheRefusedUpdateUnchangedIsRefused(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            f.transport.enqueue(status: 412, json: .object(todo("a", "theirs", version: "v2")), headers: ["ETag": "\"v2\""])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            let failure = try #require(error.operationErrors.first)
            await #expect(throws: SyncError.resolutionWouldRepeat) { try await failure.keepAndUpdate(todo("a", "my edit", version: "v1")) }
            await #expect(throws: SyncError.resolutionWouldRepeat) { try await failure.changeOperationType(to: .update) }
            #expect(try await f.operations().map(\.version) == [failure.operationVersion], "unchanged")
            try await failure.keepLocalChange()
            f.transport.enqueueEcho(status: 200, version: "v3")
            try await f.context.push()
            #expect(f.transport.requests.last?.header("If-Match") == "\"v2\"")
        }
    }
}
