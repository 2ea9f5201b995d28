import Foundation
import Logging
public import SyncStore
import SyncWire

/// What one run of the attachment transfer queue did (``SyncContext/transferAttachments()``).
public struct AttachmentTransferSummary: Sendable, Hashable {
    /// Uploads that completed (the server holds the whole content, its SHA-256 checked).
    public var uploaded = 0
    /// Downloads that completed (the content is in the local store, its SHA-256 checked).
    public var downloaded = 0
    /// Transfers that failed for now (no network, a 5xx answer): queued again after their back-off.
    public var deferred: [AttachmentTransferRecord] = []

    /// An empty summary.
    public init() {}
}

extension AttachmentTransferRecord {
    /// The `notBefore` of a transfer the server refused for good: it is never ready again.
    static let parked = Date(timeIntervalSince1970: 32_503_680_000)
}

extension SyncContext {
    /// Runs the attachment transfers that are ready now: uploads whose item's and metadata row's
    /// inserts have reached the server, and downloads asked for with
    /// ``SyncTable/requestDownload(ofAttachment:)``. ``push()`` runs the ready uploads by itself
    /// after it sent the queue; call this to retry what failed before, or to fetch queued
    /// downloads ahead of use.
    ///
    /// Each transfer resumes where the server's (upload) or the received (download) content ends.
    /// A network failure or a 5xx answer (once the transfer's own retries are spent) leaves it
    /// queued with a growing back-off (`AttachmentTransferRecord.backOff(afterAttempts:)`); it
    /// is listed in ``AttachmentTransferSummary/deferred``. When the server cannot be reached at
    /// all, the run stops there: the other transfers stay queued as they were. A permanent refusal (the item or attachment is gone
    /// on the server: 404; too large: 413; another SHA-256: 422) parks the transfer in the queue,
    /// never tried again, and is thrown at the end.
    ///
    /// - Returns: What was transferred and what waits for its back-off.
    /// - Throws: ``SyncError/attachmentTransferFailed`` with ``SyncError/failedTransfers`` after
    ///   the other transfers ran; ``SyncError/authenticationRequired``; ``SyncError/localStoreFailed``;
    ///   ``SyncError/cancelled``. A context whose store keeps no attachments transfers nothing.
    @discardableResult
    public func transferAttachments() async throws -> AttachmentTransferSummary {
        try await transferAttachments(now: Date())
    }

    /// ``transferAttachments()`` as if it were `now` (tests pass a back-off's end).
    func transferAttachments(now: Date) async throws -> AttachmentTransferSummary {
        try await exclusive(cancelled: SyncError(.cancelled, reason: "The attachment transfers were cancelled.")) { _ in
            try await runAttachmentTransfers(uploadsOnly: false, now: now)
        }
    }

    /// Every push's steps, for the callers that run exclusively (``push()``, a pull's implicit
    /// push): pushes the queue, then uploads the content of the attachments whose item's and
    /// metadata row's inserts reached the server, also after a push that completed with operation
    /// errors (its error is thrown after the uploads).
    ///
    /// - Parameters:
    ///   - run: The exclusive run.
    ///   - refusalsThrow: Whether uploads the server refused for good throw
    ///     ``SyncError/attachmentTransferFailed``; without it they are only parked in the queue
    ///     with their `lastError` (a pull goes on with what the server holds).
    func runPushAndUploads(_ run: RunHandle, refusalsThrow: Bool) async throws {
        do {
            try await runPush(run)
        } catch let error as SyncError where error == .pushCompletedWithErrors {
            // The operations that reached the server have their content sent all the same.
            _ = try? await runAttachmentTransfers(uploadsOnly: true)
            throw error
        }
        do {
            _ = try await runAttachmentTransfers(uploadsOnly: true)
        } catch let error as SyncError where error == .attachmentTransferFailed && !refusalsThrow {
            logger.debug("Attachment uploads refused", metadata: ["count": "\(error.failedTransfers.count)"])
        }
    }

    /// Runs the transfers ready at `now` (only uploads with `uploadsOnly`); the caller runs
    /// exclusively.
    func runAttachmentTransfers(uploadsOnly: Bool, now: Date = Date()) async throws -> AttachmentTransferSummary {
        var summary = AttachmentTransferSummary()
        guard store is any AttachmentStoring else { return summary }
        var failed: [AttachmentTransferRecord] = []
        var firstFailure: SyncError?
        for transfer in try await readyAttachmentTransfers(now: now) where !uploadsOnly || transfer.direction == .upload {
            do {
                switch transfer.direction {
                case .upload:
                    try await upload(transfer)
                    summary.uploaded += 1
                case .download:
                    if try await downloadContent(table: transfer.table, id: transfer.attachmentId, retry: attachmentRetry) {
                        summary.downloaded += 1
                    }
                }
            } catch let error as SyncError where Self.isTransient(error) {
                summary.deferred.append(try await recordFailure(of: transfer, message: error.description, now: max(now, Date())))
                // No network: the others would fail the same way; they wait for the next run.
                if error == .transportFailed { break }
            } catch let error as SyncError where Self.isPermanent(error) {
                failed.append(try await park(transfer, error))
                firstFailure = firstFailure ?? error
            }
        }
        guard failed.isEmpty else {
            throw SyncError(
                .attachmentTransferFailed, reason: "The server refused \(failed.count) attachment transfer(s) for good.",
                statusCode: firstFailure?.statusCode, failedTransfers: failed, underlying: firstFailure)
        }
        return summary
    }

    /// Uploads one attachment's content, then removes its transfer from the queue.
    private func upload(_ transfer: AttachmentTransferRecord) async throws {
        let companion = TableName.attachments(of: transfer.table)
        let row = try await read { reader -> JSONObject? in try reader.lookup(table: companion, id: transfer.attachmentId) }
        guard let attachment = row.flatMap(Attachment.init(row:)) else {
            // The attachment was deleted here since: nothing to send.
            try await complete(transfer)
            return
        }
        let source = try await uploadSource(table: transfer.table, attachmentId: attachment.id)
        let client = AttachmentTransfer(client: client, chunkBytes: attachmentChunkBytes, retry: attachmentRetry)
        try await client.upload(table: transfer.table, attachmentID: attachment.id, size: attachment.size, sha256: attachment.sha256, source: source)
        try await complete(transfer)
    }

    /// Downloads one attachment's content into the store (its queued download, if any, is removed
    /// when it is stored).
    ///
    /// - Returns: Whether content was downloaded (`false`: it was here already, or the
    ///   attachment is gone locally and its queued download was dropped).
    func downloadContent(table: String, id: String, retry: AttachmentRetry) async throws -> Bool {
        let store = try attachmentStore()
        let companion = TableName.attachments(of: table)
        let (row, local) = try await mapped {
            try await store.readAttachments { reader, rows -> (JSONObject?, Bool) in
                guard try reader.columns(of: companion) != nil, let row = try reader.lookup(table: companion, id: id) else { return (nil, false) }
                return (row, try rows.record(table: table, id: row[SystemProperty.id]?.stringValue ?? id) != nil)
            }
        }
        guard let attachment = row.flatMap(Attachment.init(row:)), !local else {
            try await mapped {
                try await store.writeAttachments { _, rows in try rows.removeTransfer(table: table, attachmentId: id, direction: .download) }
            }
            return false
        }
        let sink = try await downloadSink(table: table, attachmentId: attachment.id)
        do {
            let transfer = AttachmentTransfer(client: client, chunkBytes: attachmentChunkBytes, retry: retry)
            try await transfer.download(table: table, attachmentID: attachment.id, from: sink.offset, sink: sink)
        } catch let error as SyncError where Self.isTransient(error) || error == .cancelled {
            // Cut off: what arrived stays for the next attempt, which asks for the rest by range.
            await sink.suspend()
            throw error
        } catch {
            await sink.abandon()
            throw error
        }
        return true
    }

    /// Parks a transfer the server refused for good: it stays queued with its error, never ready.
    private func park(_ transfer: AttachmentTransferRecord, _ error: SyncError) async throws -> AttachmentTransferRecord {
        let store = try attachmentStore()
        var parked = transfer
        parked.attempts += 1
        parked.notBefore = AttachmentTransferRecord.parked
        parked.lastError = error.description
        let record = parked
        try await mapped { try await store.writeAttachments { _, rows in try rows.update(record) } }
        return record
    }

    /// A failure worth another try later: no answer, a 5xx, an answer that could not be read,
    /// another request still uploading the same content (409).
    static func isTransient(_ error: SyncError) -> Bool {
        switch error.code {
        case .transportFailed, .malformedServerResponse, .conflict: return true
        case .requestFailed: return (error.statusCode ?? 0) >= 500
        default: return false
        }
    }

    /// A refusal that another try cannot change: the server has no such row (or not the caller's),
    /// another 4xx (413 too large), another SHA-256 (422), local content that is damaged.
    static func isPermanent(_ error: SyncError) -> Bool {
        switch error.code {
        case .missingOnServer, .requestFailed, .attachmentDigestMismatch, .attachmentDamaged, .attachmentContentUnavailable, .invalidItem:
            return true
        default:
            return false
        }
    }

    /// Sets how attachment transfers split and retry their requests (tests shorten them).
    func setAttachmentTransfer(chunkBytes: Int, retry: AttachmentRetry) {
        attachmentChunkBytes = max(1, chunkBytes)
        attachmentRetry = retry
    }
}
