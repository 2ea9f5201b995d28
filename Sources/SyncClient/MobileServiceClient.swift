public import Foundation
public import SyncWire

/// The entry point of the SDK: one backend (its URL and transport), its online tables and, with
/// a ``SyncContext``, its offline tables.
///
/// ```swift
/// let store = try await SQLiteStore.open(at: fileURL, encryption: .passphrase(secret))
/// let client = MobileServiceClient(url: serverURL, syncContext: SyncContext(store: store))
/// let todo = try client.syncTable("todo")
/// ```
///
/// Immutable; safe to share.
public final class MobileServiceClient: Sendable {
    /// The backend's URL (tables live under `{url}/tables/`).
    public let url: URL
    /// The offline sync context, if the client has one.
    public let syncContext: SyncContext?
    let connection: ServiceConnection

    /// Creates a client.
    /// - Parameters:
    ///   - url: the backend's URL.
    ///   - transport: how requests are sent (default: ``HTTPSyncTransport`` over URLSession).
    ///   - syncContext: the offline sync context; it is attached to this client (its pushes and
    ///     pulls go to this backend).
    ///   - installationID: the `X-ZUMO-INSTALLATION-ID` of this installation; persist one per
    ///     installation (default: a new GUID per client).
    ///   - authenticationToken: called before every request for the `X-ZUMO-AUTH` token of the
    ///     signed-in user (`nil`: send none). Return a fresh token after a 401 and push again;
    ///     a throw counts as ``SyncError/authenticationRequired`` and sends nothing.
    public init(
        url: URL, transport: any SyncTransport = HTTPSyncTransport(), syncContext: SyncContext? = nil,
        installationID: String = ItemID.generate(), authenticationToken: TokenProvider? = nil
    ) {
        self.url = url
        self.syncContext = syncContext
        self.connection = ServiceConnection(
            baseURL: url, transport: transport, installationID: installationID, authenticationToken: authenticationToken)
        syncContext?.attach(connection)
    }

    /// Gives the current authentication token (from the app's sign-in, a keychain, a refresh).
    public typealias TokenProvider = @Sendable () async throws -> String?

    /// The installation id sent with every request.
    public var installationID: String { connection.installationID }

    /// The online table `name`: every call is a request to the server.
    /// - Throws: ``SyncError/invalidTableName``.
    public func table(_ name: String) throws -> RemoteTable {
        guard TableName.isValid(name) else { throw SyncError(.invalidTableName, reason: "Not a valid table name.") }
        return RemoteTable(name: name, connection: connection, features: [.untypedTable])
    }

    /// The online table `name`, reading and writing `Model` values.
    /// - Throws: ``SyncError/invalidTableName``.
    public func table<Model: Codable & Sendable>(_ name: String, as type: Model.Type) throws -> TypedRemoteTable<Model> {
        guard TableName.isValid(name) else { throw SyncError(.invalidTableName, reason: "Not a valid table name.") }
        return TypedRemoteTable(RemoteTable(name: name, connection: connection, features: [.typedTable]))
    }

    /// The offline table `name` of the client's sync context.
    /// - Throws: ``SyncError/missingSyncContext`` (the client has none),
    ///   ``SyncError/invalidTableName``.
    public func syncTable(_ name: String) throws -> SyncTable {
        guard let syncContext else {
            throw SyncError(.missingSyncContext, reason: "The client has no sync context.")
        }
        return try syncContext.syncTable(name)
    }

    /// The offline table `name`, reading and writing `Model` values.
    /// - Throws: as ``syncTable(_:)``.
    public func syncTable<Model: Codable & Sendable>(_ name: String, as type: Model.Type) throws -> TypedSyncTable<Model> {
        TypedSyncTable(try syncTable(name))
    }
}
