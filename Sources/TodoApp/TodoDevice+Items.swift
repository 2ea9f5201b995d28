import Foundation
import SyncClient
public import SyncWire

extension TodoDevice {
    /// Adds an item offline; it is queued for the next push.
    public func add(text: String) async throws -> JSONObject {
        try await table.insert(["text": .string(text), "complete": false])
    }

    /// The items, ordered by text (as the tutorial lists them); open ones only unless `all`.
    public func items(all: Bool = false) async throws -> [JSONObject] {
        try await table.read(Self.listQuery(all: all)).items
    }

    /// The query of the list: items by text (then id), open ones only unless `all`.
    static func listQuery(all: Bool) -> Query {
        let query = Query().orderBy("text").orderBy("id")
        return all ? query : query.where(Predicate(.binary(.eq, .member("complete"), .literal(.bool(false)))))
    }

    /// The full id of the one item whose id starts with `prefix` (ids match whatever the ASCII
    /// case of their letters).
    public func resolveID(_ prefix: String) async throws -> String {
        if ItemID.isValid(prefix), let id = try await table.lookup(id: prefix)?["id"]?.stringValue { return id }
        let folded = ItemID.key(prefix)
        let matches = try await items(all: true).compactMap { $0["id"]?.stringValue }.filter { ItemID.key($0).hasPrefix(folded) }
        switch matches.count {
        case 0: throw TodoError.unknownID(prefix)
        case 1: return matches[0]
        default: throw TodoError.ambiguousID(prefix, matches: matches.count)
        }
    }

    /// Changes an item's text and/or completion offline.
    @discardableResult
    public func edit(_ prefix: String, text: String? = nil, complete: Bool? = nil) async throws -> JSONObject {
        guard text != nil || complete != nil else { throw TodoError.nothingToChange }
        let id = try await resolveID(prefix)
        guard var item = try await table.lookup(id: id) else { throw TodoError.unknownID(prefix) }
        if let text { item["text"] = .string(text) }
        if let complete { item["complete"] = .bool(complete) }
        try await table.update(item)
        return item
    }

    /// Deletes an item offline.
    public func delete(_ prefix: String) async throws {
        let id = try await resolveID(prefix)
        guard let item = try await table.lookup(id: id) else { throw TodoError.unknownID(prefix) }
        try await table.delete(item)
    }
}
