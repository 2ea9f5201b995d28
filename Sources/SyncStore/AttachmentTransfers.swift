public import Foundation
import SyncSQL

/// A queued transfer of an attachment's content: a row of the store's system table
/// `__attachment_transfers` (inside the encrypted database, never synced). The queue survives
/// restarts; the HTTP transfer itself takes the rows from here.
public struct AttachmentTransferRecord: Sendable, Hashable {
    /// Which way the content goes.
    public enum Direction: Int, Sendable, Hashable, CaseIterable {
        /// From this store to the server.
        case upload = 0
        /// From the server into this store.
        case download = 1
    }

    /// The item's table.
    public var table: String
    /// The attachment's id.
    public var attachmentId: String
    /// Upload or download.
    public var direction: Direction
    /// Failed attempts so far.
    public var attempts: Int
    /// The transfer is not tried again before this moment (back-off after a failure).
    public var notBefore: Date
    /// The last failure, in one sentence, if any.
    public var lastError: String?

    /// A record.
    ///
    /// - Parameters:
    ///   - table: The item's table.
    ///   - attachmentId: The attachment's id.
    ///   - direction: Upload or download.
    ///   - attempts: Failed attempts so far.
    ///   - notBefore: Not tried before this moment.
    ///   - lastError: The last failure.
    package init(
        table: String, attachmentId: String, direction: Direction, attempts: Int = 0, notBefore: Date = Date(timeIntervalSince1970: 0),
        lastError: String? = nil
    ) {
        self.table = table
        self.attachmentId = attachmentId
        self.direction = direction
        self.attempts = attempts
        self.notBefore = notBefore
        self.lastError = lastError
    }

    /// The back-off after `attempts` failures: 2^attempts seconds, at most an hour.
    ///
    /// - Parameter attempts: The failures so far (from 1).
    /// - Returns: The delay before the next attempt.
    package static func backOff(afterAttempts attempts: Int) -> TimeInterval {
        min(3600, pow(2, Double(min(max(attempts, 0), 12))))
    }
}

extension AttachmentRows {
    /// Queues a transfer (a transfer already queued for the attachment and direction stays as it is).
    ///
    /// - Throws: `StoreError`.
    package func enqueue(_ record: AttachmentTransferRecord) throws {
        try session.run(StoreSQL.enqueueTransfer, Self.values(record))
    }

    /// Replaces a queued transfer (its attempts, back-off and last error).
    ///
    /// - Throws: `StoreError`.
    package func update(_ record: AttachmentTransferRecord) throws {
        try session.run(StoreSQL.replaceTransfer, Self.values(record))
    }

    /// Removes a queued transfer (done, or no longer wanted).
    ///
    /// - Throws: `StoreError`.
    package func removeTransfer(table: String, attachmentId: String, direction: AttachmentTransferRecord.Direction) throws {
        try session.run(StoreSQL.deleteTransfer, [.text(table), .text(attachmentId), .integer(Int64(direction.rawValue))])
    }

    /// The queued transfers, oldest first by back-off.
    ///
    /// - Throws: `StoreError`.
    package func transfers() throws -> [AttachmentTransferRecord] {
        try session.rows(StoreSQL.allTransfers).map { row in
            AttachmentTransferRecord(
                table: row[0].textValue ?? "", attachmentId: row[1].textValue ?? "",
                direction: AttachmentTransferRecord.Direction(rawValue: Int(row[2].integerValue ?? 0)) ?? .upload,
                attempts: Int(row[3].integerValue ?? 0), notBefore: ValueCoding.date(row[4]), lastError: row[5].textValue)
        }
    }

    private static func values(_ record: AttachmentTransferRecord) -> [SQLValue] {
        [
            .text(record.table), .text(record.attachmentId), .integer(Int64(record.direction.rawValue)), .integer(Int64(record.attempts)),
            ValueCoding.dateText(record.notBefore), record.lastError.map(SQLValue.text) ?? .null,
        ]
    }
}

extension StoreSQL {
    static let transferColumns = "\"tableName\", \"attachmentId\", \"direction\", \"attempts\", \"notBefore\", \"lastError\""
    static let enqueueTransfer = "INSERT OR IGNORE INTO \"__attachment_transfers\" (\(transferColumns)) VALUES (?, ?, ?, ?, ?, ?)"
    static let replaceTransfer = "INSERT OR REPLACE INTO \"__attachment_transfers\" (\(transferColumns)) VALUES (?, ?, ?, ?, ?, ?)"
    static let deleteTransfer = "DELETE FROM \"__attachment_transfers\" WHERE \"tableName\" = ? AND \"attachmentId\" = ? AND \"direction\" = ?"
    static let allTransfers = "SELECT \(transferColumns) FROM \"__attachment_transfers\" ORDER BY \"notBefore\", \"tableName\", \"attachmentId\""
}
