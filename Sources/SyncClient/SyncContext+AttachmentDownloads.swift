import Foundation
import SyncStore
import SyncWire

/// When the content of a table's attachments comes to this device
/// (``SyncContext/setAttachmentDownloadPolicy(_:forTable:)``).
public enum AttachmentDownloadPolicy: Sendable, Hashable {
    /// When it is read (``SyncTable/content(ofAttachment:)``) or asked for
    /// (``SyncTable/requestDownload(ofAttachment:)``). The default.
    case onDemand
    /// Ahead of use: every pull of the table's attachment rows queues a download of each
    /// attachment whose content is not here, and ``SyncContext/transferAttachments()`` (or live
    /// sync) downloads it.
    case eager
}

extension SyncContext {
    /// Sets when the content of `table`'s attachments is downloaded: on demand (the default) or
    /// eagerly after each pull of its attachment rows (``SyncTable/attachmentsTable``). The
    /// setting lasts as long as the context.
    ///
    /// - Parameters:
    ///   - policy: ``AttachmentDownloadPolicy/onDemand`` or ``AttachmentDownloadPolicy/eager``.
    ///   - table: The items' table (`T`, not `T__attachments`).
    /// - Throws: ``SyncError/invalidTableName`` for an invalid name or a companion table's name;
    ///   the setting is then unchanged.
    public func setAttachmentDownloadPolicy(_ policy: AttachmentDownloadPolicy, forTable table: String) throws(SyncError) {
        guard TableName.isServed(table), TableName.attachmentOwner(of: table) == nil else {
            throw SyncError(.invalidTableName, reason: "A download policy is set on an items' table, not on its attachments table.")
        }
        switch policy {
        case .eager: eagerDownloadTables.insert(table.lowercased())
        case .onDemand: eagerDownloadTables.remove(table.lowercased())
        }
    }

    /// When the content of `table`'s attachments is downloaded.
    ///
    /// - Parameter table: The items' table.
    /// - Returns: The policy set by ``setAttachmentDownloadPolicy(_:forTable:)``, else
    ///   ``AttachmentDownloadPolicy/onDemand``.
    public func attachmentDownloadPolicy(forTable table: String) -> AttachmentDownloadPolicy {
        eagerDownloadTables.contains(table.lowercased()) ? .eager : .onDemand
    }

    /// After a pull of `table`, when it is an attachments table `T__attachments`: the content of
    /// attachments whose row is gone is removed, and, when `T`'s policy is eager, a download of
    /// every attachment whose content is not here is queued.
    func settleAttachments(afterPullOf table: String) async throws {
        guard let owner = TableName.attachmentOwner(of: table) else { return }
        try await reconcileAttachments(of: owner)
        if attachmentDownloadPolicy(forTable: owner) == .eager { try await queueMissingDownloads(of: owner) }
    }

    /// Queues a download of each attachment of `table` whose content is not in the store (a
    /// download queued already, parked ones included, stays as it is).
    func queueMissingDownloads(of table: String) async throws {
        guard let store = store as? any AttachmentStoring else { return }
        let companion = TableName.attachments(of: table)
        try await mapped {
            try await store.writeAttachments { writer, rows in
                guard try writer.columns(of: companion) != nil else { return }
                let local = Set(try rows.records(table: table).map(\.id))
                for row in try writer.read(Query().description(table: companion)).items {
                    guard let id = row[SystemProperty.id]?.stringValue, !local.contains(id) else { continue }
                    try rows.enqueue(AttachmentTransferRecord(table: table, attachmentId: id, direction: .download))
                }
            }
        }
    }
}
