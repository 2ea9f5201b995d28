import SyncStore
import SyncWire

/// The operation queue's rules, applied inside one store write: a local write changes the row
/// **and** the queue in the caller's transaction, so either both happen or neither does.
enum PendingOperationQueue {
    /// Records a local insert: rejects a second insert (or an insert after any pending
    /// operation) and an id that already exists locally; stores the item; queues an insert.
    /// - Returns: the stored row.
    static func insert(_ item: JSONObject, id: String, table: String, in writer: any SyncRecordsWriter) throws -> JSONObject {
        let existing = try writer.operation(table: table, itemId: id)
        guard CondenseAction.condense(existing: existing?.kind, existingState: existing?.state ?? .pending, new: .insert) == .add
        else {
            throw SyncError(.operationNotAllowed, reason: "An operation for this item is already pending.")
        }
        if try writer.lookup(table: table, id: id) != nil {
            throw SyncError(.itemAlreadyExists, reason: "An item with this id already exists in the local table.")
        }
        try writer.upsert(table: table, items: [item], ignoreMissingColumns: false)
        _ = try writer.addOperation(kind: .insert, table: table, itemId: id, item: nil)
        return try writer.lookup(table: table, id: id) ?? item
    }

    /// Records a local update: stores the item and queues an update, or folds into the pending
    /// insert or update of the item. The item's system properties that are `null` keep their
    /// stored values (``withoutUnknownSystemValues(_:)``); an item the local table does not have
    /// is stored only when it carries a `version` (the update then goes over that version).
    /// - Throws: ``SyncError/itemNotFound`` for an item that is not in the local table and has
    ///   no version; ``SyncError/pendingDelete``.
    static func update(_ item: JSONObject, id: String, table: String, in writer: any SyncRecordsWriter) throws {
        let stored = try writer.lookup(table: table, id: id)
        let id = stored?[SystemProperty.id]?.stringValue ?? id
        let item = withoutUnknownSystemValues(item)
        let existing = try writer.operation(table: table, itemId: id)
        let action = CondenseAction.condense(
            existing: existing?.kind, existingState: existing?.state ?? .pending, new: .update)
        switch (action, existing) {
        case (.add, _):
            guard stored != nil || hasVersion(item) else { throw SyncError.notInLocalTable }
            try writer.upsert(table: table, items: [item], ignoreMissingColumns: false)
            _ = try writer.addOperation(kind: .update, table: table, itemId: id, item: nil)
        case (.keep, var operation?):
            try writer.upsert(table: table, items: [item], ignoreMissingColumns: false)
            try touch(&operation, in: writer)
        default:
            throw SyncError.pendingDelete
        }
    }

    /// Records a local delete: removes the row and queues a delete carrying the item (its
    /// version rides in `If-Match`), or cancels a pending insert that cannot be on the server.
    /// A failed insert the server refused because it has the item (its error holds the server's
    /// copy) becomes a delete of that copy, over its version.
    /// The delete carries the stored row overlaid with the caller's values (its `null` system
    /// properties left out); an item the local table does not have is deleted only when the
    /// caller's item carries a `version`.
    /// - Throws: ``SyncError/itemNotFound`` for an item that is not in the local table and has
    ///   no version; ``SyncError/operationNotAllowed``; ``SyncError/pendingDelete``.
    static func delete(_ item: JSONObject, id: String, table: String, in writer: any SyncRecordsWriter) throws {
        let stored = try writer.lookup(table: table, id: id)
        let id = stored?[SystemProperty.id]?.stringValue ?? id
        let existing = try writer.operation(table: table, itemId: id)
        let serverCopyVersion = try existing.flatMap { try serverVersion(refusing: $0, in: writer) }
        let action = CondenseAction.condense(
            existing: existing?.kind, existingState: existing?.state ?? .pending, serverHasItem: serverCopyVersion != nil,
            new: .delete)
        // The operation keeps the stored row (it has the server's version), overlaid with the
        // caller's values; a refused insert's delete goes over the server copy's version.
        var kept = stored ?? [:]
        kept.merge(withoutUnknownSystemValues(item)) { _, new in new }
        kept[SystemProperty.id] = .string(id)
        if let serverCopyVersion { kept[SystemProperty.version] = .string(serverCopyVersion) }
        switch (action, existing) {
        case (.add, _):
            guard stored != nil || hasVersion(kept) else { throw SyncError.notInLocalTable }
            try writer.delete(table: table, ids: [id])
            _ = try writer.addOperation(kind: .delete, table: table, itemId: id, item: kept)
        case (.cancelBoth, let operation?):
            try writer.delete(table: table, ids: [id])
            try writer.deleteOperation(id: operation.id)
        case (.convertToDelete, var operation?):
            try writer.delete(table: table, ids: [id])
            operation.kind = .delete
            operation.item = kept
            try touch(&operation, in: writer)
        case (.refuseUntilPushed, _):
            throw SyncError(
                .operationNotAllowed,
                reason: "The item's insert may already be on the server: push first (or discard the insert), then delete.")
        default:
            throw SyncError.pendingDelete
        }
    }

    /// The item without the system properties it holds as `null` (`version`, `createdAt`,
    /// `updatedAt`, `deleted`, any case): a copy read before the server's answer was stored has
    /// them `null`, and writing it back must not erase the version the answer brought (the next
    /// update would go without `If-Match`, over whatever the server holds).
    static func withoutUnknownSystemValues(_ item: JSONObject) -> JSONObject {
        var item = item
        for (name, value) in item where value.isNull && SystemProperty.all.contains(where: { ASCIICase.equal($0, name) }) {
            item[name] = nil
        }
        return item
    }

    /// The version of the server's copy of an item whose insert the server refused because it
    /// has the item (a failed insert whose error holds a copy that is not deleted), else `nil`.
    private static func serverVersion(refusing operation: TableOperationRecord, in writer: any SyncRecordsWriter) throws -> String? {
        guard operation.kind == .insert, operation.state == .failed else { return nil }
        let copies = try writer.operationErrors(operationId: operation.id).compactMap(\.serverItem)
        guard let copy = copies.last, !PushAnswer.isDeleted(copy) else { return nil }
        return copy[SystemProperty.version]?.stringValue
    }

    private static func hasVersion(_ item: JSONObject) -> Bool {
        item[SystemProperty.version]?.stringValue != nil
    }

    /// Marks an operation changed: bumps its version (so a push in flight will not remove it or
    /// overwrite the row with an older answer), drops its stored errors, and clears a failure.
    static func touch(_ operation: inout TableOperationRecord, in writer: any SyncRecordsWriter) throws {
        operation.version += 1
        if operation.state == .failed { operation.state = .pending }
        try writer.deleteOperationErrors(operationId: operation.id)
        try writer.updateOperation(operation)
    }
}
