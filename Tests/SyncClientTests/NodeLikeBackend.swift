import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization

/// A scripted tables backend that behaves as the Node server of Azure Mobile Apps (SQLite) does
/// where it differs from ours: ids are compared byte by byte (`dup` and `DUP` are two items), a
/// read by id ignores `__includeDeleted` (an item it has deleted answers 404) while a filtered
/// read honours it, and a duplicate insert is answered 409 with the sent item echoed (no
/// `version`). Deletes are soft; `POST /tables/{table}/{id}` with `If-Match` undeletes.
///
/// It understands what the client sends: reads by id, filtered reads of one id
/// (`$filter=id eq '…'`), list reads paged by `$skip`/`$top` (incremental ones by
/// `updatedAt ge …`, a millisecond per change), POST, PATCH and DELETE.
final class NodeLikeBackend: SyncTransport {
    struct Item: Sendable {
        var values: JSONObject
        var version = 1
        var deleted = false
        var updatedAt = 0
    }

    private struct State {
        var items: [String: Item] = [:]  // by exact id
        var order: [String] = []  // ids in the order they were created
        var hidden: Set<String> = []  // ids that exist but no read shows (another user's)
        var clock = 0
        var requests: [SyncRequest] = []
    }

    private let state = Mutex(State())

    /// Every request received, in order.
    var requests: [SyncRequest] { state.withLock { $0.requests } }

    /// The item of exactly `id`, as stored.
    func item(_ id: String) -> Item? { state.withLock { $0.items[id] } }

    /// Stores an item (created now, or changed if it exists); `hidden` items refuse inserts but
    /// no read shows them.
    func put(_ id: String, _ text: String, deleted: Bool = false, hidden: Bool = false) {
        state.withLock { state in
            state.clock += 1
            if state.items[id] == nil { state.order.append(id) }
            var item = state.items[id] ?? Item(values: [:], version: 0)
            item.values = ["id": .string(id), "text": .string(text)]
            item.version += 1
            item.deleted = deleted
            item.updatedAt = state.clock
            state.items[id] = item
            if hidden { state.hidden.insert(id) }
        }
    }

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        state.withLock { state in
            state.requests.append(request)
            return Self.answer(request, &state)
        }
    }

    private static func answer(_ request: SyncRequest, _ state: inout State) -> SyncResponse {
        let path = request.url.path.split(separator: "/").map(String.init)
        guard let tables = path.firstIndex(of: "tables"), path.count > tables + 1 else { return reply(404, ["error": "Not Found"]) }
        let id = path.count > tables + 2 ? path[tables + 2] : nil
        let ifMatch = request.header("If-Match").flatMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
        switch (request.method, id) {
        case (.get, nil):
            return list(request, state)
        case (.get, let id?):
            guard let item = state.items[id], !item.deleted, !state.hidden.contains(id) else { return reply(404, ["error": "Not Found"]) }
            return reply(200, render(item), eTag: item.version)
        case (.post, nil):
            guard let body = request.jsonObject, let newId = body["id"]?.stringValue else { return reply(400, ["error": "no id"]) }
            if state.items[newId] != nil { return SyncResponse(statusCode: 409, body: request.body ?? Data()) }
            state.clock += 1
            var values = body
            for name in ["version", "updatedAt", "createdAt", "deleted"] { values[name] = nil }
            state.items[newId] = Item(values: values, updatedAt: state.clock)
            state.order.append(newId)
            return reply(201, render(state.items[newId] ?? Item(values: [:])), eTag: 1)
        case (.post, let id?):  // undelete
            return change(id, ifMatch: ifMatch, deletedToo: true, &state) { $0.deleted = false }
        case (.patch, let id?):
            return change(id, ifMatch: ifMatch, deletedToo: false, &state) { item in
                for (name, value) in request.jsonObject ?? [:] where !["id", "version", "updatedAt", "createdAt", "deleted"].contains(name) {
                    item.values[name] = value
                }
            }
        case (.delete, let id?):
            let answer = change(id, ifMatch: ifMatch, deletedToo: false, &state) { $0.deleted = true }
            return answer.isSuccess ? SyncResponse(statusCode: 200, body: Data()) : answer
        default:
            return reply(405, ["error": "Method Not Allowed"])
        }
    }

    /// Changes the item of `id` (404 when there is none, it is hidden, or it is deleted and not
    /// `deletedToo`; 412 with the item when `ifMatch` is not its version), with a new version.
    private static func change(
        _ id: String, ifMatch: Int?, deletedToo: Bool, _ state: inout State, _ body: (inout Item) -> Void
    ) -> SyncResponse {
        guard var item = state.items[id], deletedToo || !item.deleted, !state.hidden.contains(id) else {
            return reply(404, ["error": "Not Found"])
        }
        if let ifMatch, ifMatch != item.version { return reply(412, render(item), eTag: item.version) }
        body(&item)
        state.clock += 1
        item.version += 1
        item.updatedAt = state.clock
        state.items[id] = item
        return reply(200, render(item), eTag: item.version)
    }

    /// A list read: `$filter=id eq '…'` (exact) or no filter, deleted items only with
    /// `__includeDeleted`, in creation order, paged by `$skip` and `$top`.
    private static func list(_ request: SyncRequest, _ state: State) -> SyncResponse {
        var ids = state.order.filter { !state.hidden.contains($0) }
        if let filter = request.queryValue("$filter") {
            let byID = "id eq '", since = "updatedAt ge datetimeoffset'"
            if filter.hasPrefix(byID), filter.hasSuffix("'") {
                let wanted = String(filter.dropFirst(byID.count).dropLast()).replacingOccurrences(of: "''", with: "'")
                ids = ids.filter { $0 == wanted }
            } else if filter.hasPrefix(since), filter.hasSuffix("'"),
                let bound = WireDate.milliseconds(from: String(filter.dropFirst(since.count).dropLast()))
            {
                ids = ids.filter { (state.items[$0].map(stamp) ?? 0) >= bound }.sorted {
                    (state.items[$0].map(stamp) ?? 0) < (state.items[$1].map(stamp) ?? 0)
                }
            } else {
                return reply(400, ["error": "unsupported filter"])
            }
        }
        if request.queryValue("__includeDeleted") == nil { ids = ids.filter { state.items[$0]?.deleted == false } }
        let skip = request.queryValue("$skip").flatMap(Int.init) ?? 0
        let top = request.queryValue("$top").flatMap(Int.init) ?? 50
        let page = ids.dropFirst(skip).prefix(top).compactMap { state.items[$0] }.map { JSONValue.object(render($0)) }
        return SyncResponse(statusCode: 200, body: (try? JSONCoding.encode(JSONValue.array(page))) ?? Data())
    }

    /// An item's `updatedAt` in milliseconds: a millisecond per change.
    private static func stamp(_ item: Item) -> Int64 { 1_000_000_000_000 + Int64(item.updatedAt) }

    private static func render(_ item: Item) -> JSONObject {
        var object = item.values
        object["version"] = .string(String(item.version))
        object["updatedAt"] = .string(WireDate.string(milliseconds: stamp(item)))
        object["deleted"] = .bool(item.deleted)
        return object
    }

    private static func reply(_ status: Int, _ object: JSONObject, eTag: Int? = nil) -> SyncResponse {
        SyncResponse(
            statusCode: status, headers: eTag.map { ["ETag": "\"\($0)\""] } ?? [:],
            body: (try? JSONCoding.encode(JSONValue.object(object))) ?? Data())
    }
}

/// A client over a fresh store of `kind` and a ``NodeLikeBackend``.
struct NodeLikeClient {
    let backend: NodeLikeBackend
    let store: SQLiteStore
    let context: SyncContext

    func table() throws -> SyncTable { try context.syncTable("todo") }

    func rows() async throws -> [JSONObject] {
        try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items
    }

    /// The requests received, as `METHOD path`.
    var lines: [String] { backend.requests.map { "\($0.method.rawValue) \($0.url.path)" } }
}

/// Runs `body` with a fresh ``NodeLikeClient`` and removes its files afterwards.
func withNodeLikeClient<T>(_ kind: StoreKind, _ body: (NodeLikeClient) async throws -> T) async throws -> T {
    let (test, store) = try await TestStore.make(kind)
    let backend = NodeLikeBackend()
    let client = MobileServiceClient(url: ClientFixture.serverURL, transport: backend, installationID: "install-1")
    let node = NodeLikeClient(backend: backend, store: store, context: SyncContext(client: client, store: store))
    defer { test.directory.remove() }
    do {
        let result = try await body(node)
        try await store.close()
        return result
    } catch {
        try await store.close()
        throw error
    }
}
