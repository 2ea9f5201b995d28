import Foundation
import SyncSQL
import SyncSQLite

/// A row of the store's system table `__attachments` (never synced): which file holds an
/// attachment's content, and, in an encrypted store, its wrapped key.
package struct AttachmentFileRecord: Sendable, Hashable {
    /// The item's table.
    package var table: String
    /// The attachment's id.
    package var id: String
    /// The file's name in the store's ``AttachmentVault``.
    package var file: String
    /// The attachment key, wrapped (encrypted stores; `nil` in a plain store).
    package var wrappedKey: [UInt8]?
}

/// The `__attachments` rows of one transaction of a ``SQLiteStore``.
///
/// Handed to the closures of `AttachmentStoring.writeAttachments(_:)`; it lives as long as the
/// closure runs.
package struct AttachmentRows {
    let session: StoreSession

    /// Records an attachment file written by ``AttachmentVault``.
    ///
    /// - Parameter staged: The written file.
    /// - Throws: `StoreError`.
    package func insert(_ staged: StagedAttachment) throws {
        try session.run(
            StoreSQL.insertAttachment,
            [.text(staged.table), .text(staged.id), .text(staged.file), staged.wrappedKey.map(SQLValue.blob) ?? .null])
    }

    /// The row of attachment `id` of `table`, or `nil`.
    ///
    /// - Throws: `StoreError`.
    package func record(table: String, id: String) throws -> AttachmentFileRecord? {
        try session.rows(StoreSQL.attachmentByID, [.text(table), .text(id)]).first.map(Self.record(from:))
    }

    /// Every row, or those of one table.
    ///
    /// - Throws: `StoreError`.
    package func records(table: String? = nil) throws -> [AttachmentFileRecord] {
        let rows = try table.map { try session.rows(StoreSQL.attachmentsOfTable, [.text($0)]) } ?? session.rows(StoreSQL.allAttachments)
        return rows.map(Self.record(from:))
    }

    /// Removes the row of attachment `id` of `table` and its queued transfers (its file is the
    /// caller's to remove once the transaction has committed).
    ///
    /// - Throws: `StoreError`.
    package func delete(table: String, id: String) throws {
        try session.run(StoreSQL.deleteAttachment, [.text(table), .text(id)])
        try session.run(StoreSQL.deleteTransfersOfAttachment, [.text(table), .text(id)])
        try removePartial(table: table, id: id)
    }

    /// Records a download suspended midway (its file stays in the vault until it is resumed,
    /// or removed once its row is gone).
    ///
    /// - Throws: `StoreError`.
    package func savePartial(_ partial: PartialAttachment) throws {
        try session.run(
            StoreSQL.savePartial,
            [.text(partial.table), .text(partial.id), .text(partial.file), partial.wrappedKey.map(SQLValue.blob) ?? .null, .integer(partial.length)])
    }

    /// The suspended download of attachment `id` of `table`, or `nil`.
    ///
    /// - Throws: `StoreError`.
    package func partial(table: String, id: String) throws -> PartialAttachment? {
        try session.rows(StoreSQL.partialByID, [.text(table), .text(id)]).first.map(Self.partial(from:))
    }

    /// Every suspended download.
    ///
    /// - Throws: `StoreError`.
    package func partials() throws -> [PartialAttachment] {
        try session.rows(StoreSQL.allPartials).map(Self.partial(from:))
    }

    /// Forgets the suspended download of attachment `id` of `table` (its file is the caller's to
    /// remove, or the next sweep's).
    ///
    /// - Throws: `StoreError`.
    package func removePartial(table: String, id: String) throws {
        try session.run(StoreSQL.deletePartial, [.text(table), .text(id)])
    }

    static func partial(from row: [SQLValue]) -> PartialAttachment {
        var wrapped: [UInt8]?
        if case .blob(let bytes) = row[3] { wrapped = bytes }
        return PartialAttachment(
            table: row[0].textValue ?? "", id: row[1].textValue ?? "", file: row[2].textValue ?? "", wrappedKey: wrapped,
            length: row[4].integerValue ?? 0)
    }

    static func record(from row: [SQLValue]) -> AttachmentFileRecord {
        var wrapped: [UInt8]?
        if case .blob(let bytes) = row[3] { wrapped = bytes }
        return AttachmentFileRecord(table: row[0].textValue ?? "", id: row[1].textValue ?? "", file: row[2].textValue ?? "", wrappedKey: wrapped)
    }
}

/// A store that keeps attachment content: the SDK's sync tables reach attachments through this.
package protocol AttachmentStoring: LocalStore {
    /// Where the content files are.
    var attachmentVault: AttachmentVault { get }
    /// Runs `body` in one write transaction with the transaction's `__attachments` rows beside
    /// its writer: the metadata row and the file's row commit together, or neither does.
    func writeAttachments<T: Sendable>(_ body: @Sendable (any SyncRecordsWriter, AttachmentRows) throws -> T) async throws -> T
    /// Runs `body` in a read transaction with the transaction's `__attachments` rows beside its
    /// reader.
    func readAttachments<T: Sendable>(_ body: @Sendable (any SyncRecordsReader, AttachmentRows) throws -> T) async throws -> T
    /// Removes the files no row names (a crash between a file's rename and its row's commit, or
    /// rows removed since).
    func sweepAttachmentFiles() async throws
}

extension SQLiteStore: AttachmentStoring {
    package func writeAttachments<T: Sendable>(_ body: @Sendable (any SyncRecordsWriter, AttachmentRows) throws -> T) async throws -> T {
        try writeTransaction { session, writer in try body(writer, AttachmentRows(session: session)) }
    }

    package func readAttachments<T: Sendable>(_ body: @Sendable (any SyncRecordsReader, AttachmentRows) throws -> T) async throws -> T {
        try await read { reader in
            guard let session = reader as? StoreSession else { throw StoreError.database }
            return try body(session, AttachmentRows(session: session))
        }
    }

    package func sweepAttachmentFiles() async throws {
        guard !isReadOnly else { return }
        try removeUnrecordedAttachmentFiles()
    }

    /// Removes the vault's files that no `__attachments` row names.
    func removeUnrecordedAttachmentFiles() throws {
        guard FileManager.default.fileExists(atPath: attachmentVault.directory.path) else { return }
        let kept = try writeTransaction { session, _ in
            let rows = AttachmentRows(session: session)
            // Suspended downloads of the store's kind are kept; others (a plain store's, encrypted
            // since) are forgotten and their files removed.
            var kept = try rows.records().map(\.file)
            for partial in try rows.partials() {
                if (partial.wrappedKey != nil) == attachmentVault.isEncrypted {
                    kept.append(partial.file)
                } else {
                    try rows.removePartial(table: partial.table, id: partial.id)
                }
            }
            return Set(kept)
        }
        attachmentVault.sweep(keeping: kept)
    }
}

extension StoreSQL {
    static let attachmentColumns = "\"tableName\", \"attachmentId\", \"file\", \"wrappedKey\""
    static let insertAttachment = "INSERT OR REPLACE INTO \"__attachments\" (\(attachmentColumns)) VALUES (?, ?, ?, ?)"
    static let attachmentByID = "SELECT \(attachmentColumns) FROM \"__attachments\" WHERE \"tableName\" = ? AND \"attachmentId\" = ?"
    static let attachmentsOfTable = "SELECT \(attachmentColumns) FROM \"__attachments\" WHERE \"tableName\" = ? ORDER BY \"attachmentId\""
    static let allAttachments = "SELECT \(attachmentColumns) FROM \"__attachments\" ORDER BY \"tableName\", \"attachmentId\""
    static let deleteAttachment = "DELETE FROM \"__attachments\" WHERE \"tableName\" = ? AND \"attachmentId\" = ?"
    static let partialColumns = "\"tableName\", \"attachmentId\", \"file\", \"wrappedKey\", \"length\""
    static let savePartial = "INSERT OR REPLACE INTO \"__attachment_partials\" (\(partialColumns)) VALUES (?, ?, ?, ?, ?)"
    static let partialByID = "SELECT \(partialColumns) FROM \"__attachment_partials\" WHERE \"tableName\" = ? AND \"attachmentId\" = ?"
    static let allPartials = "SELECT \(partialColumns) FROM \"__attachment_partials\" ORDER BY \"tableName\", \"attachmentId\""
    static let deletePartial = "DELETE FROM \"__attachment_partials\" WHERE \"tableName\" = ? AND \"attachmentId\" = ?"
    static let deleteTransfersOfAttachment = "DELETE FROM \"__attachment_transfers\" WHERE \"tableName\" = ? AND \"attachmentId\" = ?"
}
