package import Foundation
public import SyncStore
import SyncWire
import Synchronization

extension SyncTable {
    /// Queues a download of an attachment's content (one whose metadata was pulled). The queue is
    /// kept in the store's system tables and survives restarts.
    ///
    /// - Parameter id: The attachment's id.
    /// - Throws: ``SyncError/attachmentNotFound``, ``SyncError/attachmentsUnsupported``,
    ///   ``SyncError/localStoreFailed``. Content already here queues nothing.
    public func requestDownload(ofAttachment id: String) async throws {
        let store = try context.attachmentStore()
        let table = name, companion = attachmentsTable
        try await context.mapped {
            try await store.writeAttachments { writer, rows in
                guard try writer.columns(of: companion) != nil, let row = try writer.lookup(table: companion, id: id),
                    let storedId = row[SystemProperty.id]?.stringValue
                else { throw SyncError(.attachmentNotFound, reason: "The table has no attachment with this id.") }
                guard try rows.record(table: table, id: storedId) == nil else { return }
                try rows.enqueue(AttachmentTransferRecord(table: table, attachmentId: storedId, direction: .download))
            }
        }
    }
}

extension SyncContext {
    /// The queued attachment transfers (uploads of local content, downloads asked for), by the
    /// time they may next be tried.
    ///
    /// - Throws: ``SyncError/attachmentsUnsupported``, ``SyncError/localStoreFailed``.
    public func attachmentTransfers() async throws -> [AttachmentTransferRecord] {
        let store = try attachmentStore()
        return try await mapped { try await store.readAttachments { _, rows in try rows.transfers() } }
    }

    /// The transfers to try now: their back-off has passed, and, for an upload, neither the item's
    /// insert nor its metadata row's insert is still queued (the content goes after its rows).
    ///
    /// - Parameter now: The current time.
    /// - Returns: The transfers, in queue order.
    package func readyAttachmentTransfers(now: Date = Date()) async throws -> [AttachmentTransferRecord] {
        let store = try attachmentStore()
        return try await mapped {
            try await store.readAttachments { reader, rows in
                try rows.transfers().filter { transfer in
                    guard transfer.notBefore <= now else { return false }
                    guard transfer.direction == .upload else { return true }
                    let companion = TableName.attachments(of: transfer.table)
                    guard try reader.operation(table: companion, itemId: transfer.attachmentId) == nil,
                        let row = try reader.lookup(table: companion, id: transfer.attachmentId)
                    else { return false }
                    return try reader.operation(table: transfer.table, itemId: row["itemId"]?.stringValue ?? "") == nil
                }
            }
        }
    }

    /// Records a transfer's failure: one more attempt, tried again after the back-off
    /// (`AttachmentTransferRecord.backOff(afterAttempts:)`).
    /// - Returns: The record as it is now queued.
    @discardableResult
    package func recordFailure(of transfer: AttachmentTransferRecord, message: String, now: Date = Date()) async throws -> AttachmentTransferRecord {
        let store = try attachmentStore()
        var failed = transfer
        failed.attempts += 1
        failed.notBefore = now.addingTimeInterval(AttachmentTransferRecord.backOff(afterAttempts: failed.attempts))
        failed.lastError = message
        let record = failed
        try await mapped { try await store.writeAttachments { _, rows in try rows.update(record) } }
        return record
    }

    /// Removes a transfer that completed.
    package func complete(_ transfer: AttachmentTransferRecord) async throws {
        let store = try attachmentStore()
        try await mapped {
            try await store.writeAttachments { _, rows in
                try rows.removeTransfer(table: transfer.table, attachmentId: transfer.attachmentId, direction: transfer.direction)
            }
        }
    }

    /// The local content of an attachment, as the source of its upload.
    package func uploadSource(table: String, attachmentId: String) async throws -> any AttachmentContentSource {
        try await attachmentContent(table: table, id: attachmentId, download: false)
    }

    /// A sink that writes a download into the store (sealed in an encrypted store), checks its
    /// SHA-256 and size against the metadata row, and commits it on ``AttachmentContentSink/finish()``.
    /// It goes on from what a download suspended before kept (``AttachmentDownloadSink/offset``);
    /// a suspended download that cannot be resumed (its file missing or damaged, its key wrapped
    /// before a rotation) is dropped and the sink starts from nothing.
    package func downloadSink(table: String, attachmentId: String) async throws -> AttachmentDownloadSink {
        let store = try attachmentStore()
        let companion = TableName.attachments(of: table)
        let row = try await read { reader -> JSONObject? in
            guard try reader.columns(of: companion) != nil else { return nil }
            return try reader.lookup(table: companion, id: attachmentId)
        }
        guard let row, let attachment = Attachment(row: row) else {
            throw SyncError(.attachmentNotFound, reason: "The table has no attachment with this id.")
        }
        let partial = try await mapped { try await store.readAttachments { _, rows in try rows.partial(table: table, id: attachment.id) } }
        if let partial {
            if let writer = try? store.attachmentVault.resumeWrite(partial) {
                return AttachmentDownloadSink(store: store, table: table, attachment: attachment, writer: writer)
            }
            try await mapped { try await store.writeAttachments { _, rows in try rows.removePartial(table: table, id: attachment.id) } }
            store.attachmentVault.remove(files: [partial.file])
        }
        let writer = try Self.mapped { try store.attachmentVault.beginWrite(table: table, id: attachment.id) }
        return AttachmentDownloadSink(store: store, table: table, attachment: attachment, writer: writer)
    }
}

/// Writes a downloaded attachment into the local store: appended in order, sealed as it goes in
/// an encrypted store; ``finish()`` checks the size and SHA-256 against the metadata row, then
/// commits the file's row and removes the download from the queue in one transaction. A sink
/// cut off midway is suspended (``suspend()``): what is safely on disk stays for the next
/// attempt, which goes on from ``offset``; an abandoned sink leaves no file.
public final class AttachmentDownloadSink: AttachmentContentSink {
    private let store: any AttachmentStoring
    private let table: String
    private let attachment: Attachment
    private let writer: Mutex<VaultFileWriter?>
    /// The content bytes the sink holds from a download suspended before: the next byte it takes.
    public let offset: Int64

    init(store: any AttachmentStoring, table: String, attachment: Attachment, writer: sending VaultFileWriter) {
        self.store = store
        self.table = table
        self.attachment = attachment
        offset = writer.size
        self.writer = Mutex(writer)
    }

    /// Appends `bytes`; `offset` must be the bytes written so far.
    ///
    /// - Throws: ``SyncError/invalidAttachment`` for another offset or content beyond the size.
    public func write(_ bytes: [UInt8], at offset: Int64) async throws {
        let size = attachment.size
        try writer.withLock { writer in
            guard let writer else { throw SyncError(.invalidAttachment, reason: "The download was finished or abandoned.") }
            guard offset == writer.size, offset + Int64(bytes.count) <= size else {
                throw SyncError(.invalidAttachment, reason: "The download's bytes do not continue the content.")
            }
            try writer.append(bytes)
        }
    }

    /// Commits the content once its size and SHA-256 match the metadata row.
    ///
    /// - Throws: ``SyncError/attachmentDamaged`` (the content differs; nothing is kept),
    ///   ``SyncError/localStoreFailed``.
    public func finish() async throws {
        guard let writer = writer.withLock({ $0.take() }) else {
            throw SyncError(.invalidAttachment, reason: "The download was finished or abandoned.")
        }
        let staged = try SyncContext.mapped { try writer.finish() }
        guard staged.size == attachment.size, staged.sha256 == attachment.sha256 else {
            store.attachmentVault.settle(staged, committed: false)
            throw SyncError(.attachmentDamaged, reason: "The downloaded content does not match its size and SHA-256.")
        }
        let table = table
        do {
            try await store.writeAttachments { _, rows in
                try rows.insert(staged)
                try rows.removeTransfer(table: table, attachmentId: staged.id, direction: .download)
                try rows.removePartial(table: table, id: staged.id)
            }
        } catch {
            store.attachmentVault.settle(staged, committed: false)
            throw SyncContext.mapStoreError(error)
        }
        store.attachmentVault.settle(staged, committed: true)
    }

    /// Abandons the download: its temporary file is removed and a suspended download of it
    /// forgotten; the queued download stays.
    public func abandon() async {
        writer.withLock { $0.take() }?.discard()
        let (table, id) = (table, attachment.id)
        _ = try? await store.writeAttachments { _, rows in try rows.removePartial(table: table, id: id) }
    }

    /// Suspends the download: the content safely on disk stays in its temporary file (whole
    /// sealed segments in an encrypted store, never plaintext; every byte received in a plain
    /// one) and is recorded in the store, so that the next download of the attachment goes on
    /// from there. When it cannot be recorded, the file is removed (the next download starts
    /// from nothing).
    public func suspend() async {
        guard let writer = writer.withLock({ $0.take() }) else { return }
        guard let partial = writer.suspend() else { return }
        do {
            try await store.writeAttachments { _, rows in try rows.savePartial(partial) }
        } catch {
            store.attachmentVault.remove(files: [partial.file])
        }
        store.attachmentVault.release([partial.file, store.attachmentVault.fileName(table: table, id: attachment.id)])
    }
}
