import SyncWire
import Synchronization

/// The attachment rules of the table service (docs/server.md, "Attachments"): the metadata rows
/// of a companion table `T__attachments` are checked, belong to a visible item of `T`, go when
/// their item goes, and take their content with them.
extension TableService {
    /// The attachment content removed by the storage transaction the current task runs in
    /// (``inTransaction(_:_:)`` sets it), `nil` outside one.
    @TaskLocal static var transactionRemovals: ContentRemovals?

    /// Runs `body` in one storage transaction, which `open` begins (joining the one the task runs
    /// in, if any): the attachment content its deletes remove is staged inside it, removed for
    /// good once it committed, and restored when it rolled back.
    ///
    /// - Parameters:
    ///   - open: Runs its argument as a storage transaction (``TableStorage/inTransaction(_:)``
    ///     or the batch's).
    ///   - body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` or the transaction throws.
    func inTransaction<T: Sendable>(
        _ open: (@Sendable @escaping () async throws -> T) async throws -> T, _ body: @Sendable @escaping () async throws -> T
    ) async throws -> T {
        if Self.transactionRemovals != nil { return try await body() }
        let removals = ContentRemovals()
        let result: T
        do {
            result = try await Self.$transactionRemovals.withValue(removals) { try await open(body) }
        } catch {
            if let content = attachmentContent(of: storage) {
                for key in removals.keys { try? await content.restoreRemoved(key) }
            }
            throw error
        }
        if let content = attachmentContent(of: storage) {
            // Committed: a file left behind by a failure here is no longer any row's content.
            for key in removals.keys { try? await content.finishRemoval(key) }
        }
        return result
    }

    /// Checks an insert into a companion table: the row's shape, and its item, which must be a
    /// visible item of the companion's table that is not deleted.
    ///
    /// - Throws: 400 for a wrong shape, 413 for a size above the limit, 404 `item not found`.
    func checkAttachmentInsert(table: String, scope: RowScope, item: JSONObject) async throws {
        guard let owner = TableName.attachmentOwner(of: table) else { return }
        let inserted = try AttachmentRows.checkInsert(item, limit: maxAttachmentBytes)
        guard let parent = try await storage.lockedRow(table: owner, id: inserted.itemID, scope: scope),
            parent[SystemProperty.deleted] != .bool(true)
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
    /// attachment rows of that item (soft or hard, as the server deletes) and their content; the
    /// content of the row itself when `table` is a companion table. The content is gone for good
    /// only once the transaction committed.
    ///
    /// A table whose companion does not exist is deleted from without a transaction; should the
    /// companion have been made meanwhile (by the insert of its first row, which held the item's
    /// row until it committed), the item's attachment rows are deleted right after, in a
    /// transaction of their own.
    func deletingAttachments(
        table: String, id: String, scope: RowScope, _ delete: @Sendable @escaping () async throws -> JSONObject
    ) async throws -> JSONObject {
        let companion = TableName.attachmentOwner(of: table) != nil ? nil : TableName.attachments(of: table)
        if let companion, try await storage.schema(of: companion) == nil {
            let deleted = try await delete()
            guard try await storage.schema(of: companion) != nil else { return deleted }
            let deletedID = deleted[SystemProperty.id]?.stringValue ?? id
            try await inTransaction({ try await storage.inTransaction($0) }) {
                let attachments = try await deleteAttachmentRows(companion, itemID: deletedID, scope: scope)
                try await removeContent(table: companion, scope: scope, ids: attachments)
            }
            return deleted
        }
        return try await inTransaction({ try await storage.inTransaction($0) }) {
            let deleted = try await delete()
            let deletedID = deleted[SystemProperty.id]?.stringValue ?? id
            guard let companion else {
                try await removeContent(table: table, scope: scope, ids: [deletedID])
                return deleted
            }
            let attachments = try await deleteAttachmentRows(companion, itemID: deletedID, scope: scope)
            try await removeContent(table: companion, scope: scope, ids: attachments)
            return deleted
        }
    }

    /// Deletes the rows of `companion` whose item is `itemID` (matched whatever the ASCII case of
    /// its letters, as ids are); returns their ids.
    private func deleteAttachmentRows(_ companion: String, itemID: String, scope: RowScope) async throws -> [String] {
        let folded = FilterExpression.function(.tolower, [.member(AttachmentRows.itemID)])
        let query = QueryDescription(
            table: companion, filter: .binary(.eq, folded, .literal(.string(ItemID.key(itemID)))),
            selection: [SystemProperty.id, AttachmentRows.itemID])
        let live = FilterExpression.binary(.eq, .member(SystemProperty.deleted), .literal(.bool(false)))
        var ids: [String] = []
        for row in try await storage.select(query, scope: scope, extraFilter: live) {
            guard let id = row[SystemProperty.id]?.stringValue, let parent = row[AttachmentRows.itemID]?.stringValue,
                ItemID.sameItem(parent, itemID)
            else { continue }
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

    /// Stages the removal of the content of `ids` in the transaction the task runs in.
    private func removeContent(table: String, scope: RowScope, ids: [String]) async throws {
        guard let content = attachmentContent(of: storage) else { return }
        for id in ids {
            let key = AttachmentKey(table: table, scope: scope, id: id)
            Self.transactionRemovals?.add(key)
            try await content.stageRemoval(key)
        }
    }
}

/// The attachment content a storage transaction removes, in the order it staged them.
final class ContentRemovals: Sendable {
    private let staged = Mutex<[AttachmentKey]>([])

    func add(_ key: AttachmentKey) { staged.withLock { $0.append(key) } }

    var keys: [AttachmentKey] { staged.withLock { $0 } }
}
