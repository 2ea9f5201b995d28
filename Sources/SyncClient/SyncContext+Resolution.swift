import SyncStore
import SyncWire

/// The resolutions of a ``TableOperationError``.
enum Resolution: Sendable {
    case cancelAndUpdate(JSONObject)
    case cancelAndDiscard
    case keep(kind: TableOperation.Kind, item: JSONObject?)
}

extension SyncContext {
    /// Applies a resolution in one transaction, after checking that the operation still exists
    /// and has not changed since the error was recorded.
    func resolve(_ error: TableOperationError, _ resolution: Resolution) async throws {
        let (table, itemId, operationId, version) = (error.table, error.itemId, error.operationId, error.operationVersion)
        var resolution = resolution
        switch resolution {
        case .cancelAndUpdate(let item): resolution = .cancelAndUpdate(try Self.resolutionItem(item, itemId: itemId))
        case .keep(let kind, let item?): resolution = .keep(kind: kind, item: try Self.resolutionItem(item, itemId: itemId))
        default: break
        }
        let checked = resolution
        try await write { writer in
            guard var operation = try writer.operation(id: operationId) else {
                throw SyncError(.operationNotFound, reason: "The operation no longer exists.")
            }
            guard operation.version == version else {
                throw SyncError(.operationChanged, reason: "The operation changed after the error was recorded.")
            }
            switch checked {
            case .cancelAndUpdate(let item):
                try writer.deleteOperation(id: operationId)
                try writer.upsert(table: table, items: [item], ignoreMissingColumns: false)
            case .cancelAndDiscard:
                try writer.deleteOperation(id: operationId)
                try writer.delete(table: table, ids: [itemId])
            case .keep(let kind, let item):
                operation.kind = kind
                operation.state = .pending
                if kind == .delete {
                    var kept = try operation.item ?? writer.lookup(table: table, id: itemId) ?? [:]
                    if let item { kept.merge(item) { _, new in new } }
                    kept[SystemProperty.id] = .string(itemId)
                    operation.item = kept
                    try writer.delete(table: table, ids: [itemId])
                } else {
                    operation.item = nil
                    if let item { try writer.upsert(table: table, items: [item], ignoreMissingColumns: false) }
                }
                try PendingOperationQueue.touch(&operation, in: writer)
            }
        }
        logger.debug("Resolved an operation error", metadata: ["table": "\(table)"])
    }

    /// A resolution item must be a non-empty item of the same id (an id-less item gets the
    /// error's id; ids match whatever their ASCII case).
    private static func resolutionItem(_ item: JSONObject, itemId: String) throws -> JSONObject {
        guard !item.isEmpty else { throw SyncError(.invalidItem, reason: "A resolution needs an item.") }
        if let value = item[SystemProperty.id], value.stringValue.map(ItemID.key) != ItemID.key(itemId) {
            throw SyncError(.invalidItem, reason: "The item's id is not the failed operation's item id.")
        }
        var item = item
        item[SystemProperty.id] = .string(itemId)
        return item
    }
}
