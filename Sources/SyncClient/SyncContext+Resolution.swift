import Logging
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
        let refused = RefusedRequest(error)
        try await write { writer in
            var operation = try Self.unchangedOperation(operationId, version: version, in: writer)
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
                    try refused?.check(kind: kind, item: kept)
                } else {
                    operation.item = nil
                    if let item { try writer.upsert(table: table, items: [item], ignoreMissingColumns: false) }
                    try refused?.check(kind: kind, item: try writer.lookup(table: table, id: itemId))
                }
                try PendingOperationQueue.touch(&operation, in: writer)
            }
        }
        logger.debug("Resolved an operation error", metadata: ["table": "\(table)"])
    }

    /// Restores an item the server has deleted (the G2 undelete) and queues the local change as
    /// an update over the restored version; see ``TableOperationError/restoreAndUpdate()``.
    func restore(_ error: TableOperationError) async throws {
        guard error.isDeletedOnServer, error.kind != .delete else {
            throw SyncError(.operationNotAllowed, reason: "Only an insert or update whose item the server deleted can be restored.")
        }
        let (table, itemId, operationId, version) = (error.table, error.itemId, error.operationId, error.operationVersion)
        _ = try await read { reader in try Self.unchangedOperation(operationId, version: version, in: reader) }
        let url = try connection.tableURL(table, id: itemId)
        let request = try connection.request(
            .post, url: url, ifMatch: error.serverItem?[SystemProperty.version]?.stringValue, features: [.untypedTable, .offline])
        let response = try await connection.send(request)
        let restored: JSONObject?
        switch response.statusCode {
        case 200..<300: restored = Self.restoredItem(response, deletedCopy: error.serverItem)
        case 404, 410: restored = nil
        default: throw ServiceConnection.error(for: response)
        }
        let sent = error.item
        let refused = RefusedRequest(error)
        try await write { writer in
            var operation = try Self.unchangedOperation(operationId, version: version, in: writer)
            var row = try writer.lookup(table: table, id: itemId) ?? sent ?? [SystemProperty.id: .string(itemId)]
            if let restored {
                // The local values over the restored item's system properties: the next push
                // updates the restored version.
                for name in [SystemProperty.version, SystemProperty.createdAt, SystemProperty.updatedAt] {
                    row[name] = restored[name].flatMap { $0.isNull ? nil : $0 }
                }
                operation.kind = .update
            } else {
                row[SystemProperty.version] = nil
                operation.kind = .insert
                try refused?.check(kind: .insert, item: row)
            }
            try writer.upsert(table: table, items: [row], ignoreMissingColumns: false)
            operation.item = nil
            operation.state = .pending
            try PendingOperationQueue.touch(&operation, in: writer)
        }
        logger.debug("Restored an item deleted on the server", metadata: ["table": "\(table)"])
    }

    /// The item of an undelete's 2xx answer. Its version is the body's, else the `ETag`'s (an
    /// answer without a body), else the deleted copy's: the update that follows then cannot
    /// overwrite blindly (a 412 brings the restored item back as a conflict).
    private static func restoredItem(_ response: SyncResponse, deletedCopy: JSONObject?) -> JSONObject {
        var item = ServiceConnection.item(from: response) ?? [:]
        if item[SystemProperty.version]?.stringValue == nil,
            let version = ServiceConnection.version(from: response) ?? deletedCopy?[SystemProperty.version]?.stringValue
        {
            item[SystemProperty.version] = .string(version)
        }
        return item
    }

    /// The operation of an error, if it still exists unchanged since the error was recorded.
    private static func unchangedOperation(_ id: Int64, version: Int64, in reader: any SyncRecordsReader) throws -> TableOperationRecord {
        guard let operation = try reader.operation(id: id) else {
            throw SyncError(.operationNotFound, reason: "The operation no longer exists.")
        }
        guard operation.version == version else {
            throw SyncError(.operationChanged, reason: "The operation changed after the error was recorded.")
        }
        return operation
    }

    /// A resolution item must be a non-empty item of the same id (an id-less item gets the
    /// error's id; ids match whatever their ASCII case); its `null` system properties keep the
    /// stored values.
    private static func resolutionItem(_ item: JSONObject, itemId: String) throws -> JSONObject {
        guard !item.isEmpty else { throw SyncError(.invalidItem, reason: "A resolution needs an item.") }
        if let value = item[SystemProperty.id], value.stringValue.map(ItemID.key) != ItemID.key(itemId) {
            throw SyncError(.invalidItem, reason: "The item's id is not the failed operation's item id.")
        }
        var item = PendingOperationQueue.withoutUnknownSystemValues(item)
        item[SystemProperty.id] = .string(itemId)
        return item
    }
}
