import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Bad input gives a typed error and leaves the store and the queue as they were.
@Suite struct BadInputTests {
    static let invalidIds: [JSONValue] = [
        "", ".", "..", "a/b", "a?b", "a+b", "a\"b", "a\\b", "a`b", "tab\tid", .string(String(repeating: "x", count: 256)), 5, 1.5, true,
        ["nested": "object"],
    ]

    /// The store's content and queue, for before/after comparisons.
    static func snapshot(_ f: ClientFixture) async throws -> ([JSONObject], [TableOperation], Int) {
        (try await f.rows(), try await f.operations(), try await f.storedErrors().count)
    }

    static func assertUnchanged(_ f: ClientFixture, _ before: ([JSONObject], [TableOperation], Int)) async throws {
        let after = try await snapshot(f)
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        #expect(after.2 == before.2)
    }

    static func seed(_ f: ClientFixture) async throws {
        try await f.table().insert(todo("seed", "seeded"))
    }

    @Test(arguments: StoreKind.allCases, invalidIds.indices)
    func invalidIdsAreRefusedBeforeQueuing(kind: StoreKind, index: Int) async throws {
        try await withClient(kind) { f in
            try await Self.seed(f)
            let before = try await Self.snapshot(f)
            let item: JSONObject = ["id": Self.invalidIds[index], "text": "x"]
            let table = try f.table()
            await #expect(throws: SyncError.invalidItemID) { try await table.insert(item) }
            await #expect(throws: SyncError.invalidItemID) { try await table.update(item) }
            await #expect(throws: SyncError.invalidItemID) { try await table.delete(item) }
            try await Self.assertUnchanged(f, before)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func updateAndDeleteNeedAnId(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await Self.seed(f)
            let before = try await Self.snapshot(f)
            await #expect(throws: SyncError.invalidItemID) { try await f.table().update(["text": "no id"]) }
            await #expect(throws: SyncError.invalidItemID) { try await f.table().delete(["text": "no id"]) }
            try await Self.assertUnchanged(f, before)
        }
    }

    @Test(arguments: ["", "1abc", "__operations", "has space", "semi;colon", "drop\"table", String(repeating: "t", count: 129)])
    func invalidTableNamesAreRefused(name: String) async throws {
        try await withClient(.plain) { f in
            #expect(throws: SyncError.invalidTableName) { try f.context.syncTable(name) }
            #expect(throws: SyncError.invalidTableName) { try f.context.syncTable(name, as: RemoteTableTests.TodoItem.self) }
            #expect(throws: SyncError.invalidTableName) { try f.client.table(name) }
        }
    }

    @Test func aContextSendsToTheBackendOfTheClientItWasMadeFor() async throws {
        let (test, store) = try await TestStore.make(.plain)
        defer { test.directory.remove() }
        let transport = FakeSyncTransport()
        let url = try #require(URL(string: "https://other.example.test/backend"))
        let client = MobileServiceClient(url: url, transport: transport, installationID: "install-2")
        let context = SyncContext(client: client, store: store)
        #expect(context.client === client)
        try await context.syncTable("todo").insert(todo("a", "x"))
        transport.enqueueEcho()
        try await context.push()
        #expect(transport.requests.map(\.url.absoluteString) == ["https://other.example.test/backend/tables/todo"])
        #expect(transport.requests.first?.headers["X-ZUMO-INSTALLATION-ID"] == "install-2")
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func anUnknownServerTableFailsThePullAndChangesNothing(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "nosuch", items: [todo("x", "local")])
            f.transport.enqueue(status: 404, json: ["error": "The table does not exist"])
            let error = await #expect(throws: SyncError.self) { try await f.table("nosuch").pull(queryId: "all") }
            #expect(error == .requestFailed)
            #expect(error?.statusCode == 404)
            #expect(try await f.rows("nosuch").count == 1)
            #expect(try await f.config("deltaToken|nosuch|all") == nil)
        }
    }

    static let malformedBodies: [String] = ["not json", "{\"id\": \"a\"}", "[1, 2]", "[{\"id\": \"a\"}, 3]", "{\"results\": 5}", ""]

    @Test(arguments: StoreKind.allCases, malformedBodies)
    func aMalformedPageFailsThePullAndChangesNothing(kind: StoreKind, body: String) async throws {
        try await withClient(kind) { f in
            try await Self.seed(f)
            f.transport.enqueueEcho()
            try await f.context.push()
            let before = try await Self.snapshot(f)
            f.transport.enqueue(status: 200, body: Data(body.utf8))
            let error = await #expect(throws: SyncError.self) { try await f.table().pull(queryId: "q") }
            #expect(error == .malformedServerResponse)
            try await Self.assertUnchanged(f, before)
            #expect(try await f.config("deltaToken|todo|q") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPageWithoutIdsIsIgnored(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await Self.seed(f)
            f.transport.enqueueEcho()
            try await f.context.push()
            let before = try await Self.snapshot(f)
            f.transport.enqueuePage([["text": "a"], ["text": "b", "id": .null], ["id": "", "text": "c"]])
            f.transport.enqueuePage([])
            #expect(try await f.table().pull() == 0, "nothing was applied")
            try await Self.assertUnchanged(f, before)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMalformedPushAnswerIsRecordedAndTheRowKept(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "local"))
            f.transport.enqueue(status: 201, body: Data("<html>oops</html>".utf8))
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.first?.statusCode == 201)
            #expect(try await f.row("a")?["text"] == "local")
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreFailureDuringAPushAbortsIt(kind: StoreKind) async throws {
        try await withClient(kind, spied: true) { f in
            let faulty = try #require(f.spy)
            try await f.table().insert(todo("a", "x"))
            faulty.set(.write)
            await #expect(throws: SyncError.pushAbortedByLocalStore) { try await f.context.push() }
            await #expect(throws: SyncError.localStoreFailed) { try await f.table().insert(todo("b", "y")) }
            faulty.set(.write, false)
            #expect(f.transport.requests.isEmpty)
            #expect(try await f.operations().map(\.itemId) == ["a"])
        }
    }

    /// An installation id no header can carry (CR LF, a header of its own after them): every
    /// request would fail as it is written (NIO refuses such a header), so each call that would
    /// send one is refused before it reads or sends anything, as a setting of the app's.
    @Test(arguments: StoreKind.allCases)
    func anInstallationIDNoHeaderCanCarryIsRefusedBeforeAnythingIsSent(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await Self.seed(f)
            let before = try await Self.snapshot(f)
            let client = MobileServiceClient(url: ClientFixture.serverURL, transport: f.transport, installationID: "install-1\r\nX-Injected: yes")
            let context = SyncContext(client: client, store: f.store)
            await #expect(throws: SyncError.invalidSetting) { try await context.push() }
            await #expect(throws: SyncError.invalidSetting) { try await context.syncTable("todo").pull() }
            await #expect(throws: SyncError.invalidSetting) { try await client.table("todo").lookup(id: "seed") }
            #expect(throws: SyncError.invalidSetting) { try context.startLiveSync([LiveSyncTable("todo")]) }
            #expect(f.transport.requests.isEmpty)
            try await Self.assertUnchanged(f, before)
        }
    }
}
