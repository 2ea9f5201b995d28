import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire

/// One client over a fresh store of a given kind and a scripted transport; with `spied`, the
/// context reaches the store through a ``FaultyStore`` (to count transactions or inject faults).
struct ClientFixture {
    static let serverURL = URL(string: "https://sync.example.test/app")!

    let test: TestStore
    let store: SQLiteStore
    let transport: FakeSyncTransport
    let context: SyncContext
    let client: MobileServiceClient
    /// The spy between the context and the store, when the fixture was made `spied`.
    let spy: FaultyStore?

    static func make(_ kind: StoreKind, handler: (any SyncConflictHandler)? = nil, spied: Bool = false) async throws -> ClientFixture {
        let (test, store) = try await TestStore.make(kind)
        return ClientFixture(test: test, store: store, transport: FakeSyncTransport(), handler: handler, spied: spied)
    }

    private init(
        test: TestStore, store: SQLiteStore, transport: FakeSyncTransport, handler: (any SyncConflictHandler)?, spied: Bool
    ) {
        self.test = test
        self.store = store
        self.transport = transport
        self.spy = spied ? FaultyStore(store) : nil
        self.client = MobileServiceClient(url: Self.serverURL, transport: transport, installationID: "install-1")
        self.context = SyncContext(client: client, store: spy.map { $0 as any LocalStore } ?? store, conflictHandler: handler)
    }

    /// Closes the store and opens it again (a restart): a new context and client over the same
    /// file, the same transport.
    func reopen(handler: (any SyncConflictHandler)? = nil) async throws -> ClientFixture {
        try await store.close()
        let reopened = try await test.open()
        return ClientFixture(test: test, store: reopened, transport: transport, handler: handler, spied: spy != nil)
    }

    func table(_ name: String = "todo") throws -> SyncTable {
        try context.syncTable(name)
    }

    /// Every local row of a table, ordered by id.
    func rows(_ table: String = "todo") async throws -> [JSONObject] {
        try await store.read(QueryDescription(table: table, orderBy: [OrderBy("id")])).items
    }

    func row(_ id: String, table: String = "todo") async throws -> JSONObject? {
        try await store.lookup(table: table, id: id)
    }

    func operations() async throws -> [TableOperation] {
        try await context.pendingOperations()
    }

    func storedErrors() async throws -> [OperationErrorRecord] {
        try await store.read { try $0.operationErrors() }
    }

    func config(_ key: String) async throws -> String? {
        try await store.read { try $0.configValue(forKey: key) }
    }

    func dispose() async throws {
        try await store.close()
        test.directory.remove()
    }
}

/// Runs `body` with a fresh fixture and removes its files afterwards.
func withClient<T>(
    _ kind: StoreKind, handler: (any SyncConflictHandler)? = nil, spied: Bool = false, _ body: (ClientFixture) async throws -> T
) async throws -> T {
    let fixture = try await ClientFixture.make(kind, handler: handler, spied: spied)
    do {
        let result = try await body(fixture)
        try await fixture.dispose()
        return result
    } catch {
        try? await fixture.dispose()
        throw error
    }
}

/// An item with a string id and text.
func todo(_ id: String, _ text: String, version: String? = nil) -> JSONObject {
    var item: JSONObject = ["id": .string(id), "text": .string(text)]
    if let version { item["version"] = .string(version) }
    return item
}

/// A server item as a pull page carries it.
func serverItem(_ id: String, _ text: String, updatedAt: String = "2001-01-01T00:00:00.000Z", deleted: Bool? = false) -> JSONObject {
    var item: JSONObject = ["id": .string(id), "text": .string(text), "version": "1", "updatedAt": .string(updatedAt)]
    if let deleted { item["deleted"] = .bool(deleted) }
    return item
}

extension SyncRequest {
    /// `METHOD /path` for compact assertions.
    var line: String { "\(method.rawValue) \(path)" }
}
