import Foundation
import HTTPTypes
import Hummingbird
import SyncWire

/// The batch extension (docs/server.md, "The batch extension"): `GET /capabilities` says whether the
/// server takes batches and how large, `POST /batch/{table}` applies up to that many writes of
/// one table in one request and answers each one as its own request would have been answered.
extension TableController {
    func addBatchRoutes(to router: Router<ServerRequestContext>) {
        router.get("capabilities") { _, _ in try capabilities() }
        guard configuration.maxBatchOperations > 0 else { return }
        let batches = router.group("batch")
        batches.add(middleware: AuthenticationMiddleware(authentication: configuration.authentication))
        batches.add(middleware: APIVersionMiddleware())
        batches.post(":table") { request, context in try await batch(request, context) }
    }

    /// `{"batch": {"maxOperations": K, "maxBytes": B}}` (B: the largest request body taken), or
    /// `{}` when batches are turned off.
    func capabilities() throws -> Response {
        var capabilities: JSONObject = [:]
        if configuration.maxBatchOperations > 0 {
            capabilities[BatchWire.batch] = .object([
                BatchWire.maxOperations: .int(Int64(configuration.maxBatchOperations)),
                BatchWire.maxBytes: .int(Int64(configuration.maxBodySize)),
            ])
        }
        return try JSONResponse.make(capabilities)
    }

    /// Applies the batch's operations in order, in one storage transaction, each through the
    /// same ``TableService`` call as its single route; answers `{"results": [...]}`, one result
    /// per operation in order. A batch that is not well formed is a 400 and nothing is written.
    /// When the storage becomes unavailable (``StorageUnavailableError``) at an operation, it and
    /// every later one are not applied: the batch is a 503 when it was the first, else each of
    /// them has a 503 result.
    func batch(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let table = try tableName(context)
        let scope = try scope(table, context)
        let operations = try BatchOperation.parse(try await body(request), limit: configuration.maxBatchOperations)
        ServerMetrics.current?.batch(operations: operations.count)
        let service = self.service
        let ids = operations.compactMap(\.writtenID)
        let results = try await service.inTransaction({ try await service.storage.inTransaction(table: table, scope: scope, ids: ids, $0) }) {
            try await apply(operations, service, table: table, scope: scope)
        }
        ServerMetrics.current?.pushed(results.count { (200..<300).contains($0.status.code) })
        // Written as the results come, members in JSONWriter's order (body, etag, status).
        var json = JSONBuilder()
        json.openObject()
        json.member(BatchWire.results)
        json.openArray()
        for result in results {
            json.openObject()
            json.member(BatchWire.body)
            json.openObject()
            switch result.body {
            case .item(let item): try json.members(of: item) { _ in false }
            case .error(let message):
                json.member("error")
                json.value(message)
            }
            json.closeObject()
            if case .item(let item) = result.body, case .string(let version)? = item[SystemProperty.version] {
                json.member(BatchWire.etag)
                json.value(ETag.quote(version))
            }
            json.member(BatchWire.status)
            try json.value(.int(Int64(result.status.code)))
            json.closeObject()
        }
        json.closeArray()
        json.closeObject()
        return JSONResponse.make(bytes: json.data)
    }

    /// Applies the operations in order; once the storage becomes unavailable, the operation and
    /// every later one get a 503 result (the first alone throws it).
    private func apply(_ operations: [BatchOperation], _ service: TableService, table: String, scope: RowScope) async throws -> [BatchResult] {
        var results: [BatchResult] = []
        results.reserveCapacity(operations.count)
        for operation in operations {
            do {
                results.append(try await operation.apply(service, table: table, scope: scope))
            } catch let error as StorageUnavailableError where !results.isEmpty {
                let refused = BatchResult(status: .serviceUnavailable, body: .error(error.description))
                results += repeatElement(refused, count: operations.count - results.count)
                break
            }
        }
        return results
    }
}

/// The names of the batch extension's JSON members.
enum BatchWire {
    static let batch = "batch"
    static let maxOperations = "maxOperations"
    static let maxBytes = "maxBytes"
    static let operations = "operations"
    static let results = "results"
    static let method = "method"
    static let id = "id"
    static let item = "item"
    static let ifMatch = "ifMatch"
    static let status = "status"
    static let etag = "etag"
    static let body = "body"
}

/// The answer to one write of a batch: the status, and the item or the error message its own
/// request would have answered (the item's version is its `ETag`).
struct BatchResult: Sendable {
    enum Body: Sendable {
        case item(JSONObject)
        case error(String)
    }

    let status: HTTPResponse.Status
    let body: Body
}

/// One write of a batch, checked for its form before any is applied.
struct BatchOperation: Sendable {
    enum Method: String, Sendable {
        case insert = "POST", update = "PATCH", delete = "DELETE"
    }

    let method: Method
    /// The id of an update or delete (an insert's id is in its item).
    let id: String?
    let item: JSONObject
    let ifMatch: String?

    /// The id the operation writes: an insert's item id, or the id of an update or delete.
    var writtenID: String? {
        if method != .insert { return id }
        if case .string(let id)? = item[SystemProperty.id], ItemID.isValid(id) { return id }
        return nil
    }

    /// The operations of a batch body; a 400 naming the first problem when it is not well formed.
    static func parse(_ body: JSONObject, limit: Int) throws -> [BatchOperation] {
        guard body.keys.allSatisfy({ $0 == BatchWire.operations }), case .array(let entries)? = body[BatchWire.operations] else {
            throw TableError.badRequest("A batch is an object with one member, operations: an array of operations")
        }
        guard (1...limit).contains(entries.count) else {
            throw TableError.badRequest("A batch holds 1 to \(limit) operations, not \(entries.count)")
        }
        return try entries.enumerated().map { index, entry in
            guard case .object(let entry) = entry else { throw TableError.badRequest("Operation \(index) is not an object") }
            return try BatchOperation(entry, index: index)
        }
    }

    /// The members an operation may have.
    private static let members: Set = [BatchWire.method, BatchWire.id, BatchWire.item, BatchWire.ifMatch]

    private init(_ entry: JSONObject, index: Int) throws {
        guard entry.keys.allSatisfy(Self.members.contains) else {
            throw TableError.badRequest("Operation \(index) has members other than method, id, item and ifMatch")
        }
        guard case .string(let name)? = entry[BatchWire.method], let method = Method(rawValue: name) else {
            throw TableError.badRequest("Operation \(index) needs a method: POST, PATCH or DELETE")
        }
        self.method = method
        switch entry[BatchWire.id] {
        case nil where method == .insert: id = nil
        case .string(let id)? where method != .insert && ItemID.isValid(id): self.id = id
        default:
            throw TableError.badRequest(
                method == .insert ? "Operation \(index) (POST) carries its id in its item" : "Operation \(index) needs a valid item id")
        }
        switch entry[BatchWire.item] {
        case .object(let item)? where method != .delete: self.item = item
        case nil where method == .delete: item = [:]
        default:
            throw TableError.badRequest(
                method == .delete ? "Operation \(index) (DELETE) has no item" : "Operation \(index) needs an item (a JSON object)")
        }
        switch entry[BatchWire.ifMatch] {
        case nil: ifMatch = nil
        case .string(let tag)? where method != .insert: ifMatch = tag
        default: throw TableError.badRequest("Operation \(index): ifMatch is a string, for PATCH and DELETE only")
        }
    }

    /// Applies the operation as its single route does and returns its result: the status and the
    /// body that route would have answered.
    func apply(_ service: TableService, table: String, scope: RowScope) async throws -> BatchResult {
        do {
            switch method {
            case .insert:
                return BatchResult(status: .created, body: .item(try await service.insert(table: table, scope: scope, item: item)))
            case .update:
                let changes = try await service.update(table: table, id: id ?? "", scope: scope, changes: item, ifMatch: ifMatch)
                return BatchResult(status: .ok, body: .item(changes))
            case .delete:
                let deleted = try await service.delete(table: table, id: id ?? "", scope: scope, ifMatch: ifMatch)
                return BatchResult(status: .ok, body: .item(deleted))
            }
        } catch let error as TableError {
            return BatchResult(status: error.status, body: error.item.map(BatchResult.Body.item) ?? .error(error.message))
        }
    }
}
