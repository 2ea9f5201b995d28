import NIOCore
import NIOPosix

/// Attachment content of an SQLite file's server: files in a directory beside it
/// (`<database>.attachments/`, created with mode 0700), each named by ``AttachmentKey/storedName``
/// (never by the user's file name). A partial upload is `<name>.part`, appended as bytes arrive
/// and synced at the end of each request; a complete one is renamed to `<name>` after a sync, and
/// the directory is synced after every rename or removal. A restarted server finds its partial
/// uploads where they were. A removal renames the files to `<file>.removed` inside the
/// transaction that deletes the row, and unlinks them once it committed (or renames them back).
///
/// Every file operation (``AttachmentFiles``) runs on a thread of a `NIOThreadPool` (NIO's pool
/// for blocking I/O), never on a thread that runs tasks or an event loop, and moves one chunk at
/// most (``AttachmentUploads/chunkBytes``): a slow or stalled disk holds up the requests of its
/// content and nothing else.
struct DirectoryAttachmentContent: AttachmentContentStore {
    /// The file operations.
    let files: AttachmentFiles
    /// Where they run.
    let pool: NIOThreadPool

    /// The directory beside the SQLite file `database`, its files used on `pool`.
    init(database: String, pool: NIOThreadPool = .singleton) {
        files = AttachmentFiles(directory: database + ".attachments")
        self.pool = pool
    }

    func held(_ key: AttachmentKey) async throws -> HeldContent {
        try await blocking { try $0.held(key) }
    }

    func append(_ key: AttachmentKey, _ bytes: ByteBuffer, at offset: Int64) async throws {
        try await blocking { try $0.append(key, bytes, at: offset) }
    }

    func flush(_ key: AttachmentKey) async throws {
        try await blocking { try $0.flush(key) }
    }

    func truncate(_ key: AttachmentKey, to count: Int64) async throws {
        try await blocking { try $0.truncate(key, to: count) }
    }

    func complete(_ key: AttachmentKey) async throws {
        try await blocking { try $0.complete(key) }
    }

    func read(_ key: AttachmentKey, at offset: Int64, limit: Int) async throws -> ByteBuffer {
        try await blocking { try $0.read(key, at: offset, limit: limit) }
    }

    func stageRemoval(_ key: AttachmentKey) async throws {
        try await blocking { try $0.stageRemoval(key) }
    }

    func finishRemoval(_ key: AttachmentKey) async throws {
        try await blocking { try $0.finishRemoval(key) }
    }

    func restoreRemoved(_ key: AttachmentKey) async throws {
        try await blocking { try $0.restoreRemoved(key) }
    }

    /// Runs `operation` on a thread of the pool and waits for it without holding a thread.
    private func blocking<T: Sendable>(_ operation: @escaping @Sendable (AttachmentFiles) throws -> T) async throws -> T {
        let files = self.files
        return try await pool.runIfActive { try operation(files) }
    }
}
