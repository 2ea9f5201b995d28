import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Pull without a query id: docs/protocol.md §3 cases 30, 31, 34, 42, 43, 44.
@Suite struct PullTests {
    static func items(_ range: Range<Int>) -> [JSONObject] {
        range.map { serverItem(String(format: "item-%03d", $0), "text \($0)") }
    }

    /// The decoded query of a request as a dictionary.
    static func query(_ request: SyncRequest) -> [String: String] {
        Dictionary(request.queryItems.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    // Case 30
    @Test(arguments: StoreKind.allCases)
    func deletedItemsAreRemovedAndOthersUpserted(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("two", "to be deleted")])
            f.transport.enqueuePage([
                serverItem("one", "1", deleted: false), serverItem("two", "2", deleted: true), serverItem("three", "3", deleted: nil),
            ])
            f.transport.enqueuePage([])
            let received = try await f.table().pull(pageSize: 50)
            #expect(received == 3)
            let requests = f.transport.requests
            #expect(requests.map(\.line) == ["GET /app/tables/todo", "GET /app/tables/todo"])
            #expect(Self.query(requests[0]) == ["$top": "50", "$skip": "0", "__includeDeleted": "true"])
            #expect(Self.query(requests[1]) == ["$top": "50", "$skip": "3", "__includeDeleted": "true"])
            #expect(requests[0].header("X-ZUMO-FEATURES") == "TQ,OL")
            #expect(try await f.rows().compactMap { $0["id"]?.stringValue } == ["one", "three"])
            #expect(try await f.row("one")?["version"] == "1")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    // Case 31
    @Test(arguments: StoreKind.allCases)
    func pendingOperationsArePushedFirst(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "local"))
            f.transport.enqueueEcho()
            f.transport.enqueuePage([])
            try await f.table().pull()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo", "GET /app/tables/todo"])
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPushErrorAbandonsThePullBeforeAnyRequest(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "local"))
            f.transport.enqueue(status: 409, json: ["id": "a", "text": "server", "version": "1"])
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.table().pull() }
            #expect(f.transport.requests.map(\.method) == [.post])
            #expect(try await f.row("a")?["text"] == "local")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func operationsOfOtherTablesDoNotTriggerAPush(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table("other").insert(todo("x", "elsewhere"))
            f.transport.enqueuePage([])
            try await f.table().pull()
            #expect(f.transport.requests.map(\.line) == ["GET /app/tables/todo"])
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    // Case 34
    @Test(arguments: StoreKind.allCases)
    func aTotalLimitIsPagedExactly(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage(Self.items(0..<50))
            f.transport.enqueuePage(Self.items(50..<100))
            f.transport.enqueuePage(Self.items(100..<148))
            let received = try await f.table().pull(Query().top(148), pageSize: 50)
            #expect(received == 148)
            #expect(f.transport.requests.map { Self.query($0)["$top"] } == ["50", "50", "48"])
            #expect(f.transport.requests.map { Self.query($0)["$skip"] } == ["0", "50", "100"])
            #expect(try await f.rows().count == 148)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aTotalOfZeroSendsNothing(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let received = try await f.table().pull(Query().top(0))
            #expect(received == 0)
            #expect(f.transport.requests.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func skipAdvancesByWhatTheServerReturned(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage(Self.items(0..<25))
            f.transport.enqueuePage(Self.items(25..<50))
            f.transport.enqueuePage(Self.items(50..<60))
            f.transport.enqueuePage([])
            let query = Query().where(Field("text") != "none").orderBy("id").skip(0)
            try await f.table().pull(query)
            #expect(f.transport.requests.map { Self.query($0)["$skip"] } == ["0", "25", "50", "60"])
            let first = Self.query(f.transport.requests[0])
            #expect(first["$filter"] == "text ne 'none'")
            #expect(first["$orderby"] == "id asc")
        }
    }

    // Case 42
    @Test(arguments: StoreKind.allCases)
    func aNextLinkIsFollowedThenSkipPagingResumes(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let link = "https://sync.example.test/app/tables/todo?$top=50&$skip=2&__includeDeleted=true&marker=x"
            f.transport.enqueuePage(Self.items(0..<2), headers: ["Link": "<\(link)>; rel=next"])
            f.transport.enqueuePage(Self.items(2..<4))
            f.transport.enqueuePage([])
            try await f.table().pull()
            let requests = f.transport.requests
            #expect(requests.count == 3)
            #expect(requests[1].url.absoluteString == link)
            #expect(Self.query(requests[2])["$skip"] == "4")
            #expect(requests.allSatisfy { $0.header("ZUMO-API-VERSION") == "2.0.0" })
            #expect(try await f.rows().count == 4)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aNextLinkToAnotherServerIsNotFollowed(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage(Self.items(0..<2), headers: ["Link": "<https://evil.example/steal>; rel=next"])
            f.transport.enqueuePage([])
            try await f.table().pull()
            #expect(f.transport.requests.allSatisfy { $0.url.host == "sync.example.test" })
            #expect(Self.query(f.transport.requests[1])["$skip"] == "2")
        }
    }

    // Case 43
    @Test(arguments: StoreKind.allCases)
    func itemsWithoutAnIdAreIgnored(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([
                ["text": "no id", "updatedAt": "2001-01-01T00:00:00.000Z"], ["id": 5, "text": "int id"], serverItem("ok", "fine"),
            ])
            f.transport.enqueuePage([])
            let applied = try await f.table().pull()
            #expect(applied == 1, "only the item with an id counts")
            #expect(try await f.rows().map { $0["id"] } == ["ok"])
        }
    }

    // Case 44
    @Test(arguments: StoreKind.allCases)
    func rowsTheServerDidNotReturnStay(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("abc", "mine"))
            f.transport.enqueueEcho()
            f.transport.enqueuePage([serverItem("def", "theirs")])
            f.transport.enqueuePage([])
            try await f.table().pull()
            #expect(try await f.rows().compactMap { $0["id"]?.stringValue } == ["abc", "def"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func itemsWithAPendingOperationAreSkipped(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            // A local write made while the page is on the wire: the page must not overwrite it.
            let gate = AsyncGate()
            let page = try JSONCoding.encode(JSONValue.array([.object(serverItem("mine", "server")), .object(serverItem("other", "x"))]))
            f.transport.enqueue { _ in
                await gate.wait()
                return SyncResponse(statusCode: 200, body: page)
            }
            f.transport.enqueuePage([])
            let table = try f.table()
            let pull = Task { try await table.pull() }
            await f.transport.waitForRequests(1)
            try await table.insert(todo("mine", "local"))
            gate.open()
            #expect(try await pull.value == 1, "the skipped item is not counted")
            #expect(try await f.row("mine")?["text"] == "local")
            #expect(try await f.row("other")?["text"] == "x")
            #expect(try await f.operations().map(\.itemId) == ["mine"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theEnvelopeShapeIsAccepted(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueue(status: 200, json: ["results": [.object(serverItem("a", "x"))], "count": 1])
            f.transport.enqueuePage([])
            let received = try await f.table().pull()
            #expect(received == 1)
            #expect(try await f.row("a")?["text"] == "x")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func progressEventsReportThePages(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let events = await f.context.events()
            f.transport.enqueuePage(Self.items(0..<3))
            f.transport.enqueuePage(Self.items(3..<5))
            f.transport.enqueuePage([])
            try await f.table().pull()
            var seen: [SyncEvent] = []
            for await event in events {
                seen.append(event)
                if case .pullFinished = event { break }
            }
            #expect(
                seen == [
                    .pullStarted(table: "todo", queryId: nil), .pagePulled(table: "todo", items: 3, total: 3),
                    .pagePulled(table: "todo", items: 2, total: 5), .pullFinished(table: "todo", items: 5),
                ])
        }
    }
}
