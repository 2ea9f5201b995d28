import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncWire

/// The routes of the tables protocol (G2): `/tables/{table}` and `/tables/{table}/{id}`.
struct TableController: Sendable {
    let service: TableService
    let configuration: ServerConfiguration

    func addRoutes(to router: Router<ServerRequestContext>) {
        let tables = router.group("tables")
        tables.add(middleware: AuthenticationMiddleware(authentication: configuration.authentication))
        tables.add(middleware: APIVersionMiddleware())
        tables.get(":table") { request, context in try await list(request, context) }
        tables.post(":table") { request, context in try await insert(request, context) }
        tables.get(":table/:id") { request, context in try await read(request, context) }
        tables.patch(":table/:id") { request, context in try await update(request, context) }
        tables.delete(":table/:id") { request, context in try await delete(request, context) }
        tables.post(":table/:id") { request, context in try await undelete(request, context) }
        addBatchRoutes(to: router)
    }

    // MARK: routes

    func list(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let table = try tableName(context)
        let items = QueryString.items(request.uri.query)
        let parsed: ODataParser.Request
        do {
            parsed = try ODataParser.parseRequest(table: table, queryItems: items)
        } catch {
            throw TableError.badRequest(error.message)
        }
        var query = parsed.query
        let requestedTop = query.top ?? (configuration.maxTop > 0 ? configuration.maxTop : Int(Int32.max))
        if configuration.maxTop > 0, let top = query.top, top > configuration.maxTop {
            throw TableError.badRequest("You cannot request more than \(configuration.maxTop) records")
        }
        query.top = min(requestedTop, configuration.pageSize)
        let result: (page: ItemPage, totalCount: Int?)
        do {
            result = try await service.list(query, scope: try scope(table, context), includeDeleted: parsed.includeDeleted)
        } catch let error as QueryError {
            throw TableError.badRequest(error.message)
        }
        let listed = result.page.count
        ServerMetrics.current?.pulled(listed)
        var headers: HTTPFields = [:]
        if requestedTop > listed, listed == configuration.pageSize, let link = HTTPField.Name(WireHeader.link) {
            headers[link] = nextLink(request, items: items, skip: (query.skip ?? 0) + listed, top: requestedTop - listed)
        }
        if let count = result.totalCount {
            return JSONResponse.make(bytes: result.page.envelope(totalCount: count), headers: headers)
        }
        return JSONResponse.make(bytes: result.page.bytes, headers: headers)
    }

    func read(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let includeDeleted = QueryString.items(request.uri.query).contains { $0.name.lowercased() == WireHeader.includeDeleted.lowercased() }
        let table = try tableName(context)
        let item = try await service.read(table: table, id: try itemID(context), scope: try scope(table, context), includeDeleted: includeDeleted)
        ServerMetrics.current?.pulled(1)
        return try JSONResponse.item(item)
    }

    func insert(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let table = try tableName(context)
        let scope = try scope(table, context)
        let item = try await body(request)
        let inserted = try await service.insert(table: table, scope: scope, item: item)
        ServerMetrics.current?.pushed(1)
        return try JSONResponse.item(inserted, status: .created)
    }

    func update(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let table = try tableName(context)
        let (id, scope) = (try itemID(context), try scope(table, context))
        let changes = try await body(request)
        let updated = try await service.update(table: table, id: id, scope: scope, changes: changes, ifMatch: request.headers[.ifMatch])
        ServerMetrics.current?.pushed(1)
        return try JSONResponse.item(updated)
    }

    func delete(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let table = try tableName(context)
        let item = try await service.delete(
            table: table, id: try itemID(context), scope: try scope(table, context), ifMatch: request.headers[.ifMatch])
        ServerMetrics.current?.pushed(1)
        return try JSONResponse.item(item)
    }

    func undelete(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let table = try tableName(context)
        let item = try await service.undelete(
            table: table, id: try itemID(context), scope: try scope(table, context), ifMatch: request.headers[.ifMatch])
        ServerMetrics.current?.pushed(1)
        return try JSONResponse.item(item, status: .created)
    }

    // MARK: request parts

    /// The rows the request may reach: every row of a shared table; of a per-user table, the
    /// rows of the request's identity, and a 401 without one. An attachment companion table
    /// (`T__attachments`) is scoped as its table `T`.
    func scope(_ table: String, _ context: ServerRequestContext) throws -> RowScope {
        guard configuration.perUserTables.contains(TableName.attachmentOwner(of: table) ?? table) else { return .shared }
        guard let subject = context.identity?.subject else { throw TableError.unauthorized }
        return .owner(subject)
    }

    func tableName(_ context: ServerRequestContext) throws -> String {
        guard let table = context.parameters.get("table"), TableName.isServed(table) else {
            throw TableError.badRequest("Invalid table name")
        }
        return table
    }

    func itemID(_ context: ServerRequestContext) throws -> String {
        guard let raw = context.parameters.get("id"), let id = PercentDecoding.decode(raw), ItemID.isValid(id) else {
            throw TableError.badRequest("Invalid item id")
        }
        return id
    }

    /// The request body as a JSON object, at most `maxBodySize` bytes (413 with a JSON message
    /// beyond). The body must be strict RFC 8259 JSON (``JSONParser``): anything else is a 400
    /// naming the reason and the byte offset, never the body's text.
    func body(_ request: Request) async throws -> JSONObject {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: configuration.maxBodySize)
        } catch is NIOTooManyBytesError {
            throw TableError.contentTooLarge(limit: configuration.maxBodySize)
        }
        do {
            return try buffer.withUnsafeReadableBytes { try JSONParser.parseObject($0) }
        } catch let error as JSONError where error.reason == .notAnObject {
            throw TableError.badRequest("The request body must be a JSON object")
        } catch let error as JSONError {
            throw TableError.badRequest("The request body is not valid JSON (RFC 8259): \(error)")
        }
    }

    private func nextLink(_ request: Request, items: [(name: String, value: String)], skip: Int, top: Int) -> String {
        var next = items.filter { $0.name != "$skip" && $0.name != "$top" }
        next.append(("$skip", String(skip)))
        next.append(("$top", String(top)))
        let host = request.head.authority ?? "\(configuration.host):\(configuration.port)"
        return "<http://\(host)\(request.uri.path)?\(ODataQuery.string(next))>; rel=next"
    }
}

/// Rejects table requests without `ZUMO-API-VERSION: 2.0.x` (header, any case, or query parameter).
struct APIVersionMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let header = HTTPField.Name(WireHeader.apiVersion).flatMap { request.headers[$0] }
        // The query is read only when the header is missing.
        let version =
            header ?? QueryString.items(request.uri.query).first { $0.name.lowercased() == WireHeader.apiVersion.lowercased() }?.value
        guard let version, version == "2.0.0" || version.hasPrefix("2.0.") else {
            throw TableError.missingAPIVersion
        }
        return try await next(request, context)
    }
}

/// Query strings split into ordered, percent-decoded items.
enum QueryString {
    static func items(_ query: String?) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String { PercentDecoding.decode(s, plusAsSpace: true) ?? String(s) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
