public import Foundation
@_spi(Testing) public import SyncClient
public import SyncStore
import SyncWire

/// One device of the todo app: its local store (encrypted unless asked otherwise), the sync
/// context over it, and the client for the server.
public final class TodoDevice: Sendable {
    /// The table of the tutorial app.
    public static let tableName = "todoItem"
    /// The query id of the app's incremental pull.
    public static let queryID = "allTodoItems"
    /// The query id of the pull of the items' attachment metadata.
    public static let attachmentsQueryID = "allTodoAttachments"
    static let installationKey = "todo.installationId"

    /// The device's store (encrypted unless opened plain).
    public let store: SQLiteStore
    /// The sync context over the store.
    public let context: SyncContext
    /// The client for the server.
    public let client: MobileServiceClient
    /// The `todoItem` table.
    public let table: SyncTable

    init(store: SQLiteStore, context: SyncContext, client: MobileServiceClient, table: SyncTable) {
        self.store = store
        self.context = context
        self.client = client
        self.table = table
    }

    /// Opens (or, with `options.createIfMissing`, creates) the device's store and connects it to
    /// `server` (sending `authenticationToken` as `X-ZUMO-AUTH`, if given). Nothing is sent until
    /// a push or pull.
    public static func open(
        store url: URL, encryption: StoreEncryption, options: StoreOptions, server: URL,
        authenticationToken: String? = nil, transport: any SyncTransport = HTTPSyncTransport()
    ) async throws -> TodoDevice {
        try await open(
            store: url, encryption: encryption, options: options, server: server, authenticationToken: authenticationToken,
            transport: transport, checkpoint: nil)
    }

    /// Opens the device as ``open(store:encryption:options:server:authenticationToken:transport:)``
    /// does, with the sync engine's test hook `checkpoint` (see `SyncCheckpoint`), if any.
    @_spi(Testing)
    public static func open(
        store url: URL, encryption: StoreEncryption, options: StoreOptions, server: URL,
        authenticationToken: String? = nil, transport: any SyncTransport = HTTPSyncTransport(),
        checkpoint: (@Sendable (SyncCheckpoint) -> Void)?
    ) async throws -> TodoDevice {
        let store = try await SQLiteStore.open(at: url, encryption: encryption, options: options)
        do {
            let installation: String
            if options.readOnly {
                // A reader writes nothing: without a recorded id it has one for this run only.
                installation = try await store.read { try $0.configValue(forKey: installationKey) } ?? ItemID.generate()
            } else {
                installation = try await store.write { writer in
                    if let existing = try writer.configValue(forKey: installationKey) { return existing }
                    let generated = ItemID.generate()
                    try writer.setConfigValue(generated, forKey: installationKey)
                    return generated
                }
            }
            let tokenProvider: MobileServiceClient.TokenProvider? = authenticationToken.map { token in { @Sendable in token } }
            let client = MobileServiceClient(
                url: server, transport: transport, installationID: installation, authenticationToken: tokenProvider)
            let context = SyncContext(client: client, store: store, checkpoint: checkpoint)
            return TodoDevice(store: store, context: context, client: client, table: try context.syncTable(tableName))
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// Closes the store: its write-ahead log is checkpointed into the database file.
    ///
    /// - Throws: `StoreError` when the checkpoint or the close fails (a full disk, an I/O error);
    ///   the store is closed all the same, and every write that returned was already on the disk.
    public func close() async throws {
        try await store.close()
    }
}
