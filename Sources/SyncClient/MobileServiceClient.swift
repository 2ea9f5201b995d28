public import Foundation
public import SyncWire

/// The entry point of the SDK: one backend (its URL and transport) and its online tables. Its
/// offline tables come from a ``SyncContext`` made for it.
///
/// ```swift
/// let client = MobileServiceClient(url: serverURL)
/// let store = try await SQLiteStore.open(at: fileURL, encryption: .passphrase(secret))
/// let context = SyncContext(client: client, store: store)
/// let todo = try context.syncTable("todo")
/// ```
///
/// Immutable; safe to share.
public final class MobileServiceClient: Sendable {
    /// The backend's URL (tables live under `{url}/tables/`).
    public let url: URL
    let connection: ServiceConnection

    /// Creates a client.
    /// - Parameters:
    ///   - url: the backend's URL.
    ///   - transport: how requests are sent (default: ``HTTPSyncTransport`` over URLSession).
    ///   - installationID: the `X-ZUMO-INSTALLATION-ID` of this installation; persist one per
    ///     installation (default: a new GUID per client).
    ///   - authenticationToken: called before every request for the `X-ZUMO-AUTH` token of the
    ///     signed-in user (`nil`: send none). Return a fresh token after a 401 and push again;
    ///     a throw counts as ``SyncError/authenticationRequired`` and sends nothing.
    public init(
        url: URL, transport: any SyncTransport = HTTPSyncTransport(), installationID: String = ItemID.generate(),
        authenticationToken: TokenProvider? = nil
    ) {
        self.url = url
        self.connection = ServiceConnection(
            baseURL: url, transport: transport, installationID: installationID, authenticationToken: authenticationToken)
    }

    /// Gives the current authentication token (from the app's sign-in, a keychain, a refresh).
    public typealias TokenProvider = @Sendable () async throws -> String?

    /// The installation id sent with every request.
    public var installationID: String { connection.installationID }

    /// The online table `name`: every call is a request to the server.
    /// - Throws: ``SyncError/invalidTableName``.
    public func table(_ name: String) throws -> RemoteTable {
        guard TableName.isServed(name) else { throw SyncError.notATableName() }
        return RemoteTable(name: name, connection: connection, features: [.untypedTable])
    }

    /// The online table `name`, reading and writing `Model` values.
    /// - Throws: ``SyncError/invalidTableName``.
    public func table<Model: Codable & Sendable>(_ name: String, as type: Model.Type) throws -> TypedRemoteTable<Model> {
        guard TableName.isServed(name) else { throw SyncError.notATableName() }
        return TypedRemoteTable(RemoteTable(name: name, connection: connection, features: [.typedTable]))
    }
}
