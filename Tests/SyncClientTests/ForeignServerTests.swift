import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Backends that are not ours but speak the protocol: a 409/412 whose body is not the server's
/// item, a PATCH of an item deleted on the server answered 2xx with `deleted: true`, and the
/// system flag `deleted` that must never become a user property.
@Suite struct ForeignServerTests {
    /// A 409 whose body is the sent item echoed back (no `version`): the server's item is fetched
    /// before the error is recorded, so the error carries it.
    @Test(arguments: StoreKind.allCases, [409, 412])
    func aConflictWithoutTheServerItemFetchesIt(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "mine"))
            f.transport.enqueue { request in
                SyncResponse(statusCode: status, body: request.body ?? Data())  // the sent item, echoed
            }
            var theirs = todo("a", "theirs", version: "v9")
            theirs["updatedAt"] = "2012-12-12T12:12:12.120Z"
            f.transport.enqueue(status: 200, json: .object(theirs), headers: ["ETag": "\"v9\""])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo", "GET /app/tables/todo/a"])
            #expect(f.transport.requests.last?.queryValue("__includeDeleted") == "true")
            let failure = try #require(error.operationErrors.first)
            #expect(failure.statusCode == status, "the status as received")
            #expect(failure.isConflict)
            #expect(failure.serverItem?["version"] == "v9")
            #expect(failure.serverItem?["text"] == "theirs")
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    /// A PATCH answered 200 with `deleted: true`: the server has the item deleted, the edit did
    /// not land. A conflict, not a success; the local edit stays.
    @Test(arguments: StoreKind.allCases, [200, 201])
    func anUpdateAnsweredDeletedIsAConflict(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: "v1")])
            try await f.table().update(todo("a", "my edit", version: "v1"))
            var gone = todo("a", "before", version: "v2")
            gone["deleted"] = true
            f.transport.enqueue(status: status, json: .object(gone))
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            let failure = try #require(error.operationErrors.first)
            #expect(failure.statusCode == status)
            #expect(failure.isConflict)
            #expect(failure.serverItem?["deleted"] == true)
            #expect(try await f.operations().map(\.kind) == [.update])
            #expect(try await f.row("a")?["text"] == "my edit", "the edit is not lost")
        }
    }

    /// An item that arrives by a pull after a push stored a server answer shows no `deleted`
    /// property, and no local table has a `deleted` column.
    @Test(arguments: StoreKind.allCases)
    func theDeletedFlagIsNeverAUserProperty(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "pushed"))
            var stored = todo("a", "pushed", version: "v1")
            stored["deleted"] = false
            stored["updatedAt"] = "2013-01-01T00:00:00.000Z"
            f.transport.enqueue(status: 201, json: .object(stored))
            try await f.context.push()
            f.transport.enqueuePage([serverItem("b", "pulled", deleted: false), serverItem("c", "pulled too", deleted: nil)])
            f.transport.enqueuePage([])
            try await f.table().pull()
            let rows = try await f.rows()
            #expect(rows.map { $0["id"] } == ["a", "b", "c"])
            for row in rows { #expect(row["deleted"] == nil, "\(row.keys.sorted())") }
            #expect(try await f.store.read { try $0.columns(of: "todo") }?.keys.contains("deleted") == false)
        }
    }

    /// A server's version no header can carry (CR LF in it, a header of its own after them): the
    /// update that would send it in `If-Match` fails on its own, nothing is sent for it, the
    /// local edit stays queued, and the push goes on with the next operation (before, the version
    /// went into the header as it was).
    @Test(arguments: StoreKind.allCases)
    func aVersionNoHeaderCanCarryFailsItsOperationAndThePushGoesOn(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let hostile = "v1\r\nX-Injected: yes"
            try await f.store.upsert(table: "todo", items: [todo("a", "before", version: hostile)])
            try await f.table().update(todo("a", "my edit", version: hostile))
            try await f.table().insert(todo("b", "next"))
            f.transport.enqueueEcho()
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo"], "only b was sent")
            let failure = try #require(error.operationErrors.first)
            #expect(failure.itemId == "a")
            #expect(failure.statusCode == nil)
            #expect(failure.message.contains("If-Match"))
            #expect(try await f.operations().map(\.itemId) == ["a"])
            #expect(try await f.row("a")?["text"] == "my edit", "the edit is not lost")
            #expect(try await f.row("b")?["version"] == "1")
        }
    }
}
