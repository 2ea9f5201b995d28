import SyncStore
import SyncWire

/// Local consequences of deletes and purges for attachments: an item's attachment rows and files
/// go with it (the server deletes its rows itself when the item's delete reaches it), and files
/// whose metadata row is gone are removed.
extension SyncContext {
    /// Deletes an item (queued as usual) and, locally and unqueued, its attachments in the same
    /// transaction; their files are removed once it has committed.
    func deleteWithAttachments(_ item: JSONObject, table: String) async throws {
        guard TableName.attachmentOwner(of: table) == nil, let store = store as? any AttachmentStoring else {
            return try await delete(item, table: table)
        }
        let id = try ItemValidation.id(of: item, generateIfMissing: false)
        let files = try await mapped {
            try await store.writeAttachments { writer, rows -> [String] in
                let stored = try writer.lookup(table: table, id: id)?[SystemProperty.id]?.stringValue ?? id
                try PendingOperationQueue.delete(item, id: id, table: table, in: writer)
                return try Self.dropAttachments(ofItem: stored, table: table, writer: writer, rows: rows)
            }
        }
        store.attachmentVault.remove(files: files)
    }

    /// Removes the metadata rows of item `id` of `table`, their pending inserts and updates, and
    /// their `__attachments` rows; returns the files to remove after the commit.
    static func dropAttachments(ofItem id: String, table: String, writer: any SyncRecordsWriter, rows: AttachmentRows) throws -> [String] {
        let companion = TableName.attachments(of: table)
        guard try writer.columns(of: companion) != nil else { return [] }
        let metadata = try writer.read(Query().where(Field("itemId") == id).description(table: companion)).items
        var files: [String] = []
        for row in metadata {
            guard let attachmentId = row[SystemProperty.id]?.stringValue else { continue }
            if let operation = try writer.operation(table: companion, itemId: attachmentId), operation.kind != .delete {
                try writer.deleteOperation(id: operation.id)
            }
            try writer.delete(table: companion, ids: [attachmentId])
            if let record = try rows.record(table: table, id: attachmentId) {
                files.append(record.file)
                try rows.delete(table: table, id: attachmentId)
            }
        }
        return files
    }

    /// After a purge or a pull: removes the content of `table`'s attachments whose metadata row
    /// is gone, and the metadata rows (with no pending operation) whose item is gone.
    func reconcileAttachments(of table: String) async throws {
        guard let store = store as? any AttachmentStoring else { return }
        let companion = TableName.attachments(of: table)
        let files = try await mapped {
            try await store.writeAttachments { writer, rows -> [String] in
                let hasCompanion = try writer.columns(of: companion) != nil
                var files: [String] = []
                for record in try rows.records(table: table) {
                    let metadata = hasCompanion ? try writer.lookup(table: companion, id: record.id) : nil
                    if let metadata {
                        let itemId = metadata["itemId"]?.stringValue ?? ""
                        if try writer.lookup(table: table, id: itemId) != nil { continue }
                        if try writer.operation(table: companion, itemId: record.id) != nil { continue }
                        try writer.delete(table: companion, ids: [record.id])
                    }
                    try rows.delete(table: table, id: record.id)
                    files.append(record.file)
                }
                return files
            }
        }
        store.attachmentVault.remove(files: files)
    }
}
