public import SyncWire

/// An online table: every call is one request to the server; nothing is stored or queued.
///
/// A small value; safe to share. Get one from ``MobileServiceClient/table(_:)``.
public struct RemoteTable: Sendable {
    /// The table name.
    public let name: String
    let connection: ServiceConnection
    let features: Set<Feature>

    init(name: String, connection: ServiceConnection, features: Set<Feature>) {
        self.name = name
        self.connection = connection
        self.features = features
    }

    /// Inserts an item on the server (`POST`); without an id, the server assigns one.
    /// - Returns: the server's item (with id, version and timestamps).
    /// - Throws: ``SyncError/invalidItemID``, ``SyncError/conflict`` (the id exists; the server's
    ///   item in ``SyncError/serverItem``), ``SyncError/authenticationRequired``,
    ///   ``SyncError/requestFailed``, ``SyncError/malformedServerResponse``,
    ///   ``SyncError/transportFailed``.
    public func insert(_ item: JSONObject) async throws -> JSONObject {
        let id: String?
        switch item[SystemProperty.id] {
        case nil, .null?: id = nil
        default: id = try ItemValidation.id(of: item, generateIfMissing: false)
        }
        let body = PushOperation.wireBody(item, id: id)
        let url = try connection.tableURL(name)
        return try await sendForItem(try connection.request(.post, url: url, body: body, features: features))
    }

    /// Updates an item on the server (`PATCH`, with `If-Match` when the item has a version).
    /// - Returns: the server's item.
    /// - Throws: ``SyncError/invalidItemID``, ``SyncError/preconditionFailed`` (the version
    ///   changed; the server's item in ``SyncError/serverItem``), ``SyncError/requestFailed``
    ///   (404 for an unknown item), and the errors of ``insert(_:)``.
    public func update(_ item: JSONObject) async throws -> JSONObject {
        let id = try ItemValidation.id(of: item, generateIfMissing: false)
        let url = try connection.tableURL(name, id: id)
        let request = try connection.request(
            .patch, url: url, body: PushOperation.wireBody(item, id: id),
            ifMatch: item[SystemProperty.version]?.stringValue, features: features)
        return try await sendForItem(request)
    }

    /// Deletes an item on the server (`DELETE`, with `If-Match` when the item has a version).
    /// - Throws: ``SyncError/invalidItemID``, ``SyncError/preconditionFailed``,
    ///   ``SyncError/requestFailed`` (404 for an unknown item), and the errors of ``insert(_:)``.
    public func delete(_ item: JSONObject) async throws {
        let id = try ItemValidation.id(of: item, generateIfMissing: false)
        let url = try connection.tableURL(name, id: id)
        let request = try connection.request(
            .delete, url: url, ifMatch: item[SystemProperty.version]?.stringValue, features: features)
        let response = try await connection.send(request)
        guard response.isSuccess else { throw ServiceConnection.error(for: response) }
    }

    /// Deletes the item with `id` unconditionally; see ``delete(_:)``.
    public func delete(id: String) async throws {
        try await delete([SystemProperty.id: .string(id)])
    }

    /// The server's item with `id`, or `nil` when the server answers 404.
    /// - Throws: ``SyncError/invalidItemID`` and the request errors of ``insert(_:)``.
    public func lookup(id: String) async throws -> JSONObject? {
        let id = try ItemValidation.id(of: [SystemProperty.id: .string(id)], generateIfMissing: false)
        let url = try connection.tableURL(name, id: id)
        let response = try await connection.send(try connection.request(.get, url: url, features: features))
        if response.statusCode == 404 { return nil }
        return try item(from: response)
    }

    /// Runs a query on the server (`GET` with `$filter`, `$orderby`, `$top`, `$skip`, `$select`,
    /// `$inlinecount` and the query's parameters).
    /// - Returns: the items, and the total count when the query asked for it.
    /// - Throws: the request errors of ``insert(_:)``.
    public func read(_ query: Query = Query()) async throws -> QueryResult {
        var features = features.union([.queryObject])
        if !query.parameters.isEmpty { features.insert(.queryParameters) }
        let url = try connection.tableURL(name, query: QueryItems.make(query.description(table: name), parameters: query.parameters))
        let response = try await connection.send(try connection.request(.get, url: url, features: features))
        guard response.isSuccess else { throw ServiceConnection.error(for: response) }
        let page = try PullPage.decode(response.body, statusCode: response.statusCode)
        return QueryResult(items: page.items, totalCount: query.options.includeTotalCount ? page.count : nil)
    }

    private func sendForItem(_ request: SyncRequest) async throws -> JSONObject {
        try item(from: try await connection.send(request))
    }

    private func item(from response: SyncResponse) throws -> JSONObject {
        guard response.isSuccess else { throw ServiceConnection.error(for: response) }
        guard let item = ServiceConnection.item(from: response) else {
            throw SyncError.notAJSONObject(statusCode: response.statusCode)
        }
        return item
    }
}
