import SyncWire

/// The attachment rules of the table service (docs/server.md, "Attachments"): the metadata rows
/// of a companion table `T__attachments` are checked, belong to a visible item of `T`, go when
/// their item goes, and take their content with them.
extension TableService {
    /// Whether the current task runs in a batch's storage transaction (the batch route sets it):
    /// a delete's cascade then joins that transaction instead of opening one.
    @TaskLocal static var inBatchTransaction = false

    /// Checks an insert into a companion table: the row's shape, and its item, which must be a
    /// visible item of the companion's table that is not deleted.
    ///
    /// - Throws: 400 for a wrong shape, 413 for a size above the limit, 404 `item not found`.
    func checkAttachmentInsert(table: String, scope: RowScope, item: JSONObject) async throws {
        guard let owner = TableName.attachmentOwner(of: table) else { return }
        let inserted = try AttachmentRows.checkInsert(item, limit: maxAttachmentBytes)
        guard let parent = try await storage.row(table: owner, id: inserted.itemID, scope: scope), parent[SystemProperty.deleted] != .bool(true)
        else { throw TableError.notFound("item not found") }
    }

    /// Checks an update of a companion table's row: only `name` may change.
    ///
    /// - Throws: 400 for any other change.
    func checkAttachmentUpdate(table: String, id: String, scope: RowScope, changes: JSONObject) async throws {
        guard TableName.attachmentOwner(of: table) != nil else { return }
        guard let stored = try await storage.row(table: table, id: id, scope: scope) else { return }
        try AttachmentRows.checkUpdate(changes, stored: stored)
    }

    /// Runs a delete of `table`'s row `id` (`delete`) and, in the same transaction, deletes the
    /// attachment rows of that item (soft or hard, as the server deletes); then removes the content
    /// of every attachment row deleted, the row itself when `table` is a companion table.
    func deletingAttachments(
        table: String, id: String, scope: RowScope, _ delete: @Sendable @escaping () async throws -> JSONObject
    ) async throws -> JSONObject {
        if TableName.attachmentOwner(of: table) != nil {
            let deleted = try await delete()
            try await removeContent(table: table, scope: scope, ids: [deleted[SystemProperty.id]?.stringValue ?? id])
            return deleted
        }
        let companion = TableName.attachments(of: table)
        guard try await storage.schema(of: companion) != nil else { return try await delete() }
        let cascade: @Sendable () async throws -> (JSONObject, [String]) = {
            let deleted = try await delete()
            return (deleted, try await deleteAttachmentRows(companion, itemID: deleted[SystemProperty.id]?.stringValue ?? id, scope: scope))
        }
        let (deleted, attachments) = Self.inBatchTransaction ? try await cascade() : try await storage.inTransaction(cascade)
        try await removeContent(table: companion, scope: scope, ids: attachments)
        return deleted
    }

    /// Deletes the rows of `companion` whose item is `itemID`; returns their ids.
    private func deleteAttachmentRows(_ companion: String, itemID: String, scope: RowScope) async throws -> [String] {
        let query = QueryDescription(
            table: companion, filter: .binary(.eq, .member(AttachmentRows.itemID), .literal(.string(itemID))), selection: [SystemProperty.id])
        let live = FilterExpression.binary(.eq, .member(SystemProperty.deleted), .literal(.bool(false)))
        var ids: [String] = []
        for row in try await storage.select(query, scope: scope, extraFilter: live) {
            guard let id = row[SystemProperty.id]?.stringValue else { continue }
            let condition = WriteCondition(deleted: false)
            if softDelete {
                _ = try await storage.update(
                    table: companion, id: id, scope: scope, values: [SystemProperty.deleted: .bool(true)], condition: condition)
            } else {
                _ = try await storage.delete(table: companion, id: id, scope: scope, condition: condition)
            }
            ids.append(id)
        }
        return ids
    }

    private func removeContent(table: String, scope: RowScope, ids: [String]) async throws {
        guard let content = attachmentContent(of: storage) else { return }
        for id in ids { try await content.remove(AttachmentKey(table: table, scope: scope, id: id)) }
    }
}
