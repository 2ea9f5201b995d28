import Foundation
import SyncStore
import SyncWire

extension SyncTable {
    /// The companion table that holds this table's attachment metadata (`T__attachments`).
    public var attachmentsTable: String { TableName.attachments(of: name) }

    /// Attaches content to an item: the content goes into the store's attachment files (sealed
    /// with its own key in an encrypted store), and a metadata row into ``attachmentsTable`` is
    /// inserted and queued like any local insert (after the item's own insert in the queue).
    /// Works offline.
    ///
    /// - Parameters:
    ///   - input: The content: a file (streamed, never read whole into memory) or bytes.
    ///   - itemId: The item of this table it belongs to (it must exist locally).
    ///   - name: The file name shown to the user (1–255 characters, no `/` or NUL).
    ///   - contentType: The content type, e.g. `image/jpeg` (1–255 characters, no control characters).
    /// - Returns: The attachment's metadata, with its new id, size and SHA-256.
    /// - Throws: ``SyncError/invalidAttachment`` (invalid name or type, no such item, an unreadable
    ///   file), ``SyncError/attachmentsUnsupported``, ``SyncError/localStoreFailed``. Nothing is
    ///   kept when it throws.
    @discardableResult
    public func attach(_ input: AttachmentInput, to itemId: String, name: String, contentType: String) async throws -> Attachment {
        try await context.attach(input, to: itemId, name: name, contentType: contentType, table: self.name)
    }

    /// The attachments of an item, ordered by name then id.
    ///
    /// - Parameter itemId: The item's id.
    /// - Returns: Their metadata (local rows of ``attachmentsTable``, pulled ones included).
    /// - Throws: ``SyncError/localStoreFailed``.
    public func attachments(of itemId: String) async throws -> [Attachment] {
        let table = attachmentsTable
        let rows = try await context.read { reader -> [JSONObject] in
            guard try reader.columns(of: table) != nil else { return [] }
            return try reader.read(Query().where(Field("itemId") == itemId).description(table: table)).items
        }
        return rows.compactMap(Attachment.init(row:)).sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// The attachment with `id`, or `nil`.
    ///
    /// - Throws: ``SyncError/localStoreFailed``.
    public func attachment(id: String) async throws -> Attachment? {
        let table = attachmentsTable
        return try await context.read { reader -> JSONObject? in
            guard try reader.columns(of: table) != nil else { return nil }
            return try reader.lookup(table: table, id: id)
        }.flatMap(Attachment.init(row:))
    }

    /// The content of the attachment with `id`, to read as a stream or export to a file.
    ///
    /// Content that is not here (its metadata was pulled) is downloaded first, on demand: by
    /// ranged requests that resume after a cut, its SHA-256 checked, stored as the store keeps
    /// attachments (sealed in an encrypted store).
    ///
    /// - Throws: ``SyncError/attachmentNotFound``, ``SyncError/attachmentContentUnavailable`` (the
    ///   content is not here and could not be downloaded: no network, not on the server; the
    ///   cause in ``SyncError/underlyingError``), ``SyncError/attachmentDigestMismatch`` (the
    ///   server's bytes do not hash to the row's SHA-256), ``SyncError/attachmentDamaged`` (a
    ///   sealed file fails its check when opened), ``SyncError/authenticationRequired``,
    ///   ``SyncError/attachmentsUnsupported``.
    public func content(ofAttachment id: String) async throws -> AttachmentContent {
        try await context.attachmentContent(table: name, id: id)
    }

    /// Replaces an attachment's content: deletes it and attaches `input` under a new id with the
    /// same name (content is immutable per id).
    ///
    /// - Parameters:
    ///   - id: The attachment to replace.
    ///   - input: The new content.
    ///   - contentType: The new content type; `nil` keeps the old one.
    /// - Returns: The new attachment.
    /// - Throws: ``SyncError/attachmentNotFound`` and what ``attach(_:to:name:contentType:)`` and
    ///   ``deleteAttachment(id:)`` throw.
    @discardableResult
    public func replaceAttachment(id: String, with input: AttachmentInput, contentType: String? = nil) async throws -> Attachment {
        guard let old = try await attachment(id: id) else {
            throw SyncError(.attachmentNotFound, reason: "The table has no attachment with this id.")
        }
        let new = try await attach(input, to: old.itemId, name: old.name, contentType: contentType ?? old.contentType)
        try await deleteAttachment(id: id)
        return new
    }

    /// Deletes an attachment: its metadata row (the delete is queued like any local delete) and
    /// its local content.
    ///
    /// - Throws: ``SyncError/attachmentNotFound``, ``SyncError/operationNotAllowed`` (as for any
    ///   delete), ``SyncError/localStoreFailed``.
    public func deleteAttachment(id: String) async throws {
        try await context.deleteAttachment(table: name, id: id)
    }
}

extension SyncContext {
    /// The context's store as one that keeps attachments.
    nonisolated func attachmentStore() throws -> any AttachmentStoring {
        guard let store = store as? any AttachmentStoring else {
            throw SyncError(.attachmentsUnsupported, reason: "This store keeps no attachments.")
        }
        return store
    }

    func attach(_ input: AttachmentInput, to itemId: String, name: String, contentType: String, table: String) async throws -> Attachment {
        guard Attachment.isValidName(name) else {
            throw SyncError(.invalidAttachment, reason: "An attachment name has 1–255 characters, no '/' and no NUL.")
        }
        guard !contentType.isEmpty, contentType.count <= 255, !contentType.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else { throw SyncError(.invalidAttachment, reason: "A content type has 1–255 characters and no control characters.") }
        let store = try attachmentStore()
        guard let item = try await read({ try $0.lookup(table: table, id: itemId) }), let storedId = item[SystemProperty.id]?.stringValue
        else { throw SyncError(.invalidAttachment, reason: "The table has no item with this id.") }
        let id = ItemID.generate()
        let staged: StagedAttachment
        do {
            staged = try input.withChunks { next in try store.attachmentVault.write(table: table, id: id, chunks: next) }
        } catch {
            throw Self.mapStoreError(error)
        }
        let attachment = Attachment(id: id, itemId: storedId, name: name, contentType: contentType, size: staged.size, sha256: staged.sha256)
        let companion = TableName.attachments(of: table)
        do {
            try await store.writeAttachments { writer, rows in
                guard try writer.lookup(table: table, id: storedId) != nil else {
                    throw SyncError(.invalidAttachment, reason: "The table has no item with this id.")
                }
                try rows.insert(staged)
                _ = try PendingOperationQueue.insert(attachment.row, id: id, table: companion, in: writer)
                try rows.enqueue(AttachmentTransferRecord(table: table, attachmentId: id, direction: .upload))
            }
        } catch {
            store.attachmentVault.settle(staged, committed: false)
            throw Self.mapStoreError(error)
        }
        store.attachmentVault.settle(staged, committed: true)
        return attachment
    }

    func attachmentContent(table: String, id: String, download: Bool = true) async throws -> AttachmentContent {
        let store = try attachmentStore()
        let companion = TableName.attachments(of: table)
        let (metadata, found) = try await mapped {
            try await store.readAttachments { reader, rows -> (JSONObject?, AttachmentFileRecord?) in
                guard try reader.columns(of: companion) != nil, let row = try reader.lookup(table: companion, id: id),
                    let storedId = row[SystemProperty.id]?.stringValue
                else { return (nil, nil) }
                return (row, try rows.record(table: table, id: storedId))
            }
        }
        guard metadata.flatMap(Attachment.init(row:)) != nil else {
            throw SyncError(.attachmentNotFound, reason: "The table has no attachment with this id.")
        }
        guard let found else {
            guard download else {
                throw SyncError(.attachmentContentUnavailable, reason: "The attachment's content is not in the local store.")
            }
            do {
                // On demand: one more try after a failure without progress, so that an offline
                // device learns it at once.
                var retry = attachmentRetry
                retry.attempts = min(retry.attempts, 2)
                _ = try await downloadContent(table: table, id: id, retry: retry)
            } catch let error as SyncError where Self.isTransient(error) || error == .missingOnServer || error == .requestFailed {
                throw SyncError(.attachmentContentUnavailable, reason: "The attachment's content could not be downloaded.", underlying: error)
            }
            return try await attachmentContent(table: table, id: id, download: false)
        }
        do {
            return AttachmentContent(file: try store.attachmentVault.open(found))
        } catch {
            throw SyncError.damaged(error)
        }
    }

    func deleteAttachment(table: String, id: String) async throws {
        let store = try attachmentStore()
        let companion = TableName.attachments(of: table)
        let files = try await mapped {
            try await store.writeAttachments { writer, rows -> [String] in
                guard try writer.columns(of: companion) != nil, let row = try writer.lookup(table: companion, id: id),
                    let storedId = row[SystemProperty.id]?.stringValue
                else { throw SyncError(.attachmentNotFound, reason: "The table has no attachment with this id.") }
                try PendingOperationQueue.delete([SystemProperty.id: .string(storedId)], id: storedId, table: companion, in: writer)
                let record = try rows.record(table: table, id: storedId)
                try rows.delete(table: table, id: storedId)
                return record.map { [$0.file] } ?? []
            }
        }
        store.attachmentVault.remove(files: files)
    }

    /// Runs `body`, mapping the store's errors to ``SyncError``.
    func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw Self.mapStoreError(error) }
    }

    /// Runs `body`, mapping the store's errors to ``SyncError``.
    static func mapped<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw mapStoreError(error) }
    }
}
