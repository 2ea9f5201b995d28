import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The three kinds of conflict and their resolutions, against a scripted server that behaves like
/// the other implementations of the protocol.
@Suite struct ConflictKindTests {
    /// Pushes a pending operation of `a` against `answers` and returns the recorded error.
    func conflict(_ f: ClientFixture, _ answers: [SyncResponse]) async throws -> TableOperationError {
        for answer in answers { f.transport.enqueue { _ in answer } }
        let error = try await #require(throws: SyncError.self) { try await f.context.push() }
        #expect(error == .pushCompletedWithErrors)
        return try #require(error.operationErrors.first)
    }

    static func response(_ status: Int, _ item: JSONObject? = nil, eTag: String? = nil) throws -> SyncResponse {
        SyncResponse(
            statusCode: status, headers: eTag.map { ["ETag": "\"\($0)\""] } ?? [:],
            body: try item.map { try JSONCoding.encode(JSONValue.object($0)) } ?? Data())
    }

    static func deleted(_ id: String, _ text: String, version: String) -> JSONObject {
        var item = todo(id, text, version: version)
        item["deleted"] = true
        return item
    }

    // MARK: changed on the server

    /// "Use client" on a duplicate insert (a 409 whose body had no version, so the server's item
    /// was read) is an update over the server's version, never a second POST.
    @Test(arguments: StoreKind.allCases)
    func keepingTheLocalChangeOfADuplicateInsertUpdatesTheServerItem(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "mine"))
            let failure = try await conflict(
                f,
                [
                    try Self.response(409, ["id": "a", "text": "mine"]),  // the sent item, echoed
                    try Self.response(200, todo("a", "theirs", version: "v9"), eTag: "v9"),
                ])
            #expect(failure.conflict == .changedOnServer && failure.isConflict && !failure.isDeletedOnServer)
            try await failure.keepLocalChange()
            #expect(try await f.operations().map(\.kind) == [.update])
            f.transport.enqueueEcho(status: 200, version: "v10")
            try await f.context.push()
            let last = try #require(f.transport.requests.last)
            #expect(last.line == "PATCH /app/tables/todo/a")
            #expect(last.header("If-Match") == "\"v9\"")
            #expect(last.jsonObject?["text"] == "mine")
            #expect(f.transport.requests.filter { $0.method == .post }.count == 1, "one POST in all")
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("a")?["version"] == "v10")
        }
    }

    // MARK: deleted on the server

    @Test(arguments: StoreKind.allCases)
    func restoringAnItemDeletedOnTheServerUndeletesItThenUpdatesIt(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            let failure = try await conflict(f, [try Self.response(200, Self.deleted("a", "before", version: "v2"))])
            #expect(failure.conflict == .deletedOnServer && failure.isDeletedOnServer && failure.statusCode == 200)

            var restored = todo("a", "before", version: "v3")
            restored["deleted"] = false
            restored["updatedAt"] = "2014-04-04T04:04:04.444Z"
            f.transport.enqueue(status: 201, json: .object(restored), headers: ["ETag": "\"v3\""])
            try await failure.restoreAndUpdate()
            let undelete = try #require(f.transport.requests.last)
            #expect(undelete.line == "POST /app/tables/todo/a")
            #expect(undelete.header("If-Match") == "\"v2\"")
            #expect(undelete.body == nil)
            #expect(try await f.row("a")?["text"] == "my edit")
            #expect(try await f.row("a")?["version"] == "v3")
            #expect(try await f.operations().map(\.kind) == [.update])
            #expect(try await f.storedErrors().isEmpty)

            f.transport.enqueueEcho(status: 200, version: "v4")
            try await f.context.push()
            let patch = try #require(f.transport.requests.last)
            #expect(patch.line == "PATCH /app/tables/todo/a")
            #expect(patch.header("If-Match") == "\"v3\"")
            #expect(patch.jsonObject?["text"] == "my edit")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    /// An undelete answered without a body: the update goes over the version of its `ETag`, or
    /// without one over the deleted copy's version (never without `If-Match`).
    @Test(arguments: StoreKind.allCases, [("\"v3\"", "\"v3\""), (nil, "\"v2\"")] as [(String?, String)])
    func anUndeleteAnsweredWithoutABodyKeepsTheUpdateConditional(kind: StoreKind, answer: (eTag: String?, ifMatch: String)) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            let failure = try await conflict(f, [try Self.response(200, Self.deleted("a", "before", version: "v2"))])
            f.transport.enqueue(status: 204, body: Data(), headers: answer.eTag.map { ["ETag": $0] } ?? [:])
            try await failure.restoreAndUpdate()
            #expect(f.transport.requests.last?.line == "POST /app/tables/todo/a")
            #expect(try await f.operations().map(\.kind) == [.update])

            f.transport.enqueueEcho(status: 200, version: "v4")
            try await f.context.push()
            let patch = try #require(f.transport.requests.last)
            #expect(patch.line == "PATCH /app/tables/todo/a")
            #expect(patch.header("If-Match") == answer.ifMatch)
            #expect(patch.jsonObject?["text"] == "my edit")
        }
    }

    /// A refusal whose copy, read by id, is deleted; "use client" restores it.
    @Test(arguments: StoreKind.allCases, [404, 410, 412])
    func aRefusedUpdateOfADeletedItemIsDeletedOnServer(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            let failure = try await conflict(
                f,
                [
                    try Self.response(status, ["error": "gone"]),
                    try Self.response(200, Self.deleted("a", "before", version: "v2"), eTag: "v2"),
                ])
            #expect(f.transport.requests.last?.line == "GET /app/tables/todo/a")
            #expect(failure.conflict == .deletedOnServer && failure.statusCode == status)
            #expect(failure.serverItem?["version"] == "v2")
            f.transport.enqueue(status: 200, json: .object(todo("a", "before", version: "v3")))
            try await failure.keepLocalChange()
            #expect(f.transport.requests.last?.line == "POST /app/tables/todo/a")
            #expect(try await f.operations().map(\.kind) == [.update])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func acceptingTheDeleteDropsTheChangeAndTheRow(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            let failure = try await conflict(f, [try Self.response(200, Self.deleted("a", "before", version: "v2"))])
            let sent = f.transport.requests.count
            try await failure.acceptDelete()
            #expect(f.transport.requests.count == sent, "nothing is sent")
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a") == nil)
        }
    }

    /// The server changed the item again before the undelete: the operation stays as it was.
    @Test(arguments: StoreKind.allCases)
    func aRestoreRefusedByTheServerChangesNothing(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            let failure = try await conflict(f, [try Self.response(200, Self.deleted("a", "before", version: "v2"))])
            let before = try await f.operations()
            f.transport.enqueue(status: 412, json: .object(todo("a", "changed again", version: "v5")))
            await #expect(throws: SyncError.preconditionFailed) { try await failure.restoreAndUpdate() }
            #expect(try await f.operations() == before)
            #expect(try await f.storedErrors().count == 1)
            #expect(try await f.row("a")?["text"] == "my edit")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func onlyAnItemDeletedOnTheServerCanBeRestored(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "mine"))
            let failure = try await conflict(f, [try Self.response(409, todo("a", "theirs", version: "v2"))])
            await #expect(throws: SyncError.operationNotAllowed) { try await failure.restoreAndUpdate() }
            #expect(f.transport.requests.count == 1, "nothing is sent")
        }
    }

    // MARK: missing on the server

    @Test(arguments: StoreKind.allCases, [409, 412])
    func aRefusalWhoseItemCannotBeReadIsMissingOnServer(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            let failure = try await conflict(
                f,
                [
                    try Self.response(status, ["id": "a", "text": "my edit"]), try Self.response(404, ["error": "not found"]),
                    SyncResponse(statusCode: 200, body: Data("[]".utf8)),  // nor through a filter on the id
                ])
            #expect(f.transport.requests.map(\.line) == ["PATCH /app/tables/todo/a", "GET /app/tables/todo/a", "GET /app/tables/todo"])
            #expect(failure.conflict == .missingOnServer && failure.isConflict && failure.serverItem == nil)
            #expect(failure.statusCode == status)
            // "Use client" inserts it again.
            try await failure.keepLocalChange()
            #expect(try await f.operations().map(\.kind) == [.insert])
            f.transport.enqueueEcho(status: 201, version: "n1")
            try await f.context.push()
            let last = try #require(f.transport.requests.last)
            #expect(last.line == "POST /app/tables/todo")
            #expect(last.jsonObject?["text"] == "my edit")
            #expect(last.header("If-Match") == nil)
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    /// Reading the server's copy got no answer: the push stops as for any network failure, and
    /// the operation stays queued with nothing recorded.
    @Test(arguments: StoreKind.allCases)
    func aFailedReadOfTheServerCopyAbortsThePush(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "mine"))
            f.transport.enqueue(status: 409, json: ["id": "a", "text": "mine"])
            f.transport.enqueueNetworkError()
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.operations().map(\.kind) == [.insert])
        }
    }
}
