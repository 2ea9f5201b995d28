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

    /// Records a local update: stores the item (creating the row if it is unknown locally) and
    /// queues an update, or folds into the pending insert or update of the item.
    static func update(_ item: JSONObject, id: String, table: String, in writer: any SyncRecordsWriter) throws {
        let id = try storedSpelling(of: id, table: table, in: writer)
        let existing = try writer.operation(table: table, itemId: id)
        let action = CondenseAction.condense(
            existing: existing?.kind, existingState: existing?.state ?? .pending, new: .update)
        switch (action, existing) {
        case (.add, _):
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
    static func delete(_ item: JSONObject, id: String, table: String, in writer: any SyncRecordsWriter) throws {
        let id = try storedSpelling(of: id, table: table, in: writer)
        let existing = try writer.operation(table: table, itemId: id)
        let action = CondenseAction.condense(
            existing: existing?.kind, existingState: existing?.state ?? .pending, new: .delete)
        // The operation keeps the stored row (it has the server's version), overlaid with the
        // caller's values.
        var kept = try writer.lookup(table: table, id: id) ?? [:]
        kept.merge(item) { _, new in new }
        kept[SystemProperty.id] = .string(id)
        switch (action, existing) {
        case (.add, _):
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

    /// The id as the local table spells it (ids match whatever their ASCII case, and the
    /// spelling first written is kept), or `id` itself for an item the table does not have.
    private static func storedSpelling(of id: String, table: String, in reader: any SyncRecordsReader) throws -> String {
        try reader.lookup(table: table, id: id)?[SystemProperty.id]?.stringValue ?? id
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
