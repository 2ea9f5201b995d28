import NIOCore
import SyncKeys
import SyncWire

/// Names one attachment's content: the companion table, the owner of a per-user table's row,
/// and the attachment's id (table and id matched whatever their ASCII case, as rows are).
struct AttachmentKey: Hashable, Sendable {
    let table: String
    let owner: String?
    let id: String

    init(table: String, scope: RowScope, id: String) {
        self.table = ASCIICase.fold(table)
        self.owner = scope.owner
        self.id = ItemID.key(id)
    }

    /// A name for the content derived from table, owner and id alone (never from the user's
    /// file name): the lowercase hex SHA-256 of the three, each ended by a NUL.
    var storedName: String {
        get throws {
            var hasher = try SHA256Hasher()
            try hasher.update(Array("\(table)\u{0}\(owner.map { "o:\($0)" } ?? "shared")\u{0}\(id)\u{0}".utf8))
            return Hex.lowercase(try hasher.finalize())
        }
    }
}

/// What a storage holds of one attachment's content.
struct HeldContent: Sendable, Hashable {
    /// The bytes held, from the start.
    var count: Int64
    /// Whether the content is complete (its digest checked); `false` while it is uploaded.
    var complete: Bool

    static let none = HeldContent(count: 0, complete: false)
}

/// Where one storage engine keeps attachment content: the primitives the uploads
/// (``AttachmentUploads``) and downloads are made of. A partial upload is kept as it arrives, so
/// an upload resumes at the offset the storage holds, after a cut or a restart.
protocol AttachmentContentStore: Sendable {
    /// What is held of `key`.
    func held(_ key: AttachmentKey) async throws -> HeldContent
    /// Appends `bytes` to the partial content of `key`, which holds exactly `offset` bytes.
    func append(_ key: AttachmentKey, _ bytes: ByteBuffer, at offset: Int64) async throws
    /// Makes the partial content appended so far durable.
    func flush(_ key: AttachmentKey) async throws
    /// Cuts the partial content of `key` back to `count` bytes (0 removes it).
    func truncate(_ key: AttachmentKey, to count: Int64) async throws
    /// Marks the partial content of `key` complete, durably.
    func complete(_ key: AttachmentKey) async throws
    /// Up to `limit` bytes of `key` from `offset` (partial or complete content); empty at the end.
    func read(_ key: AttachmentKey, at offset: Int64, limit: Int) async throws -> ByteBuffer
    /// Removes the content of `key` (partial or complete; nothing when there is none) as part of
    /// the storage transaction the task runs in: the content is no longer served, and the removal
    /// can still be undone (``restoreRemoved(_:)``) until that transaction's outcome is known.
    /// A failure here fails the transaction.
    func stageRemoval(_ key: AttachmentKey) async throws
    /// Makes a staged removal final, once the transaction that staged it committed.
    func finishRemoval(_ key: AttachmentKey) async throws
    /// Undoes a staged removal, once the transaction that staged it rolled back.
    func restoreRemoved(_ key: AttachmentKey) async throws
}

extension PostgresTableStorage {
    /// Attachment content: chunks in the database.
    var attachmentContent: any AttachmentContentStore { PostgresAttachmentContent(storage: self) }
}

/// Where `storage` keeps attachment content, `nil` for an engine that keeps none (its content
/// routes answer 404).
func attachmentContent(of storage: any TableStorage) -> (any AttachmentContentStore)? {
    switch storage {
    case let sqlite as SQLiteTableStorage: return sqlite.attachmentContent
    case let postgres as PostgresTableStorage: return postgres.attachmentContent
    default: return nil
    }
}
