import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Online tables, typed access, and building real HTTP requests.
@Suite struct RemoteTableTests {
    struct TodoItem: Codable, Sendable, Equatable {
        var id: String?
        var text: String
        var complete: Bool
        var version: String?
        var updatedAt: Date?
    }

    static func client() -> (MobileServiceClient, FakeSyncTransport) {
        let transport = FakeSyncTransport()
        return (MobileServiceClient(url: ClientFixture.serverURL, transport: transport, installationID: "i"), transport)
    }

    @Test func onlineCallsGoStraightToTheServer() async throws {
        let (client, transport) = Self.client()
        let table = try client.table("todo")
        transport.enqueue(status: 201, json: ["id": "srv-1", "text": "hello", "version": "1"])
        let created = try await table.insert(["text": "hello", "updatedAt": "2000-01-01T00:00:00.000Z"])
        #expect(created["id"] == "srv-1")
        #expect(transport.requests[0].jsonObject == ["text": "hello"])  // no id: the server assigns it
        transport.enqueue(status: 200, json: ["id": "srv-1", "text": "bye", "version": "2"], headers: ["ETag": "\"2\""])
        let updated = try await table.update(["id": "srv-1", "text": "bye", "version": "1"])
        #expect(updated["version"] == "2")
        #expect(transport.requests[1].line == "PATCH /app/tables/todo/srv-1")
        #expect(transport.requests[1].header("If-Match") == "\"1\"")
        transport.enqueue(status: 404, json: ["error": "missing"])
        #expect(try await table.lookup(id: "nope") == nil)
        transport.enqueue(status: 412, json: ["id": "srv-1", "text": "other", "version": "3"])
        let conflict = await #expect(throws: SyncError.self) { try await table.delete(["id": "srv-1", "version": "2"]) }
        #expect(conflict == .preconditionFailed)
        #expect(conflict?.serverItem?["text"] == "other")
        #expect(transport.requests.allSatisfy { $0.header("X-ZUMO-FEATURES")?.contains("TU") == true })
    }

    @Test func onlineReadsSendTheQueryAndReadTheCount() async throws {
        let (client, transport) = Self.client()
        transport.enqueue(status: 200, json: ["results": [["id": "a", "text": "x"]], "count": 42])
        let query = Query().where(Field("complete") == false).orderBy("text", ascending: false).top(5).skip(10)
            .includingTotalCount().parameter("tenant", "blue")
        let result = try await client.table("todo").read(query)
        #expect(result.items.count == 1)
        #expect(result.totalCount == 42)
        let request = try #require(transport.requests.first)
        #expect(request.queryValue("$filter") == "complete eq false")
        #expect(request.queryValue("$orderby") == "text desc")
        #expect(request.queryValue("$top") == "5" && request.queryValue("$skip") == "10")
        #expect(request.queryValue("$inlinecount") == "allpages")
        #expect(request.queryValue("tenant") == "blue")
        #expect(request.queryValue("__includeDeleted") == nil)
        #expect(request.header("X-ZUMO-FEATURES") == "TU,TQ,QS")
    }

    @Test func onlineErrorsAreTyped() async throws {
        let (client, transport) = Self.client()
        let table = try client.table("todo")
        transport.enqueue(status: 401)
        await #expect(throws: SyncError.authenticationRequired) { try await table.read() }
        transport.enqueue(status: 200, body: Data("garbage".utf8))
        await #expect(throws: SyncError.malformedServerResponse) { try await table.read() }
        transport.enqueueNetworkError()
        await #expect(throws: SyncError.transportFailed) { try await table.lookup(id: "a") }
        await #expect(throws: SyncError.invalidItemID) { try await table.update(["text": "no id"]) }
        #expect(transport.requests.count == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func typedOfflineTablesRoundTripModels(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.context.syncTable("todo", as: TodoItem.self)
            let stored = try await table.insert(TodoItem(id: nil, text: "buy milk", complete: false))
            let id = try #require(stored.id)
            #expect(stored.text == "buy milk" && !stored.complete)
            try await table.update(TodoItem(id: id, text: "buy milk", complete: true))
            #expect(try await table.lookup(id: id)?.complete == true)
            f.transport.enqueueEcho(status: 201, version: "v1", updatedAt: "2021-06-07T08:09:10.123Z")
            try await f.context.push()
            let pushed = try #require(try await table.lookup(id: id))
            #expect(pushed.version == "v1")
            #expect(pushed.updatedAt == WireDate.date(from: "2021-06-07T08:09:10.123Z"))
            let open = try await table.read(Query().where(Field("complete") == true))
            #expect(open.map(\.id) == [id])
        }
    }

    @Test func typedOnlineTablesDecodeModels() async throws {
        let (client, transport) = Self.client()
        transport.enqueue(status: 200, json: [["id": "a", "text": "x", "complete": true, "updatedAt": "2020-01-01T00:00:00.000Z"]])
        let items = try await client.table("todo", as: TodoItem.self).read()
        #expect(items == [TodoItem(id: "a", text: "x", complete: true, version: nil, updatedAt: WireDate.date(from: "2020-01-01T00:00:00.000Z"))])
        transport.enqueue(status: 200, json: [["id": "a", "text": 5]])
        await #expect(throws: SyncError.invalidItem) { try await client.table("todo", as: TodoItem.self).read() }
    }

    @Test func theHTTPTransportBuildsTheRequestAsGiven() throws {
        let url = try #require(URL(string: "https://sync.example.test/app/tables/todo/a%20b?$top=5"))
        let request = SyncRequest(
            method: .patch, url: url, headers: ["ZUMO-API-VERSION": "2.0.0", "If-Match": "\"1\""], body: Data("{}".utf8))
        let built = HTTPSyncTransport(timeout: 7).urlRequest(for: request)
        #expect(built.httpMethod == "PATCH")
        #expect(built.url == url)
        #expect(built.value(forHTTPHeaderField: "zumo-api-version") == "2.0.0")
        #expect(built.value(forHTTPHeaderField: "If-Match") == "\"1\"")
        #expect(built.httpBody == Data("{}".utf8))
        #expect(built.timeoutInterval == 7)
    }

    @Test func aTrailingSlashInTheServiceURLIsHarmless() async throws {
        let transport = FakeSyncTransport()
        let client = MobileServiceClient(url: try #require(URL(string: "https://h.example/root/")), transport: transport)
        transport.enqueue(status: 200, json: [])
        _ = try await client.table("todo").read()
        #expect(transport.requests.first?.url.absoluteString == "https://h.example/root/tables/todo")
    }
}
