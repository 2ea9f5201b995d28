package import Foundation

/// An advisory lock (`flock`) on the file `<database>.lock` beside a store.
///
/// Every open store (`SQLiteStore`, SyncStore) holds it shared; key rotation, plain-to-encrypted
/// migration and the recovery of an interrupted rotation hold it exclusively. So a rotation never runs while any
/// store connection (in this process or another) is open, and a store cannot open in the middle of
/// a rotation. `flock` locks belong to the open file description, so two opens in one process
/// exclude each other too. The lock is released when the value is deinitialized (the descriptor
/// is closed); it is also released by the kernel if the process dies.
///
/// Immutable (one descriptor), so Sendable. Package-internal: the store takes it when it opens.
package final class StoreLock: Sendable {
    /// How the lock is held.
    package enum Mode: Sendable {
        /// Any number of store connections.
        case shared
        /// One maintenance operation and nothing else.
        case exclusive
    }

    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        _ = Foundation.close(descriptor)
    }

    /// The lock file of the database at `database`.
    static func lockFile(of database: URL) -> URL {
        URL(fileURLWithPath: database.path + ".lock")
    }

    /// Takes the lock of `database` without waiting.
    ///
    /// The lock file is created with mode 0600 when absent. In a directory where it cannot be
    /// created (read-only), a shared request returns `nil`: nothing can rotate there either, since
    /// a rotation writes new files beside the database.
    ///
    /// - Throws: ``StoreError/storeInUse(_:)`` when the lock is held in a conflicting mode;
    ///   ``StoreError/fileSystem(_:)`` when an exclusive lock cannot be created.
    /// With `create == false` a missing lock file is not created: a shared request returns `nil`.
    package static func acquire(for database: URL, mode: Mode, create: Bool = true) throws -> StoreLock? {
        let path = lockFile(of: database).path
        var fd = Foundation.open(path, (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0o600)
        let createError = errno
        if fd < 0, createError == EACCES || createError == EROFS || createError == EPERM {
            fd = Foundation.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        }
        guard fd >= 0 else {
            if mode == .shared { return nil }
            let directory = database.deletingLastPathComponent().path
            throw StoreError.fileSystem(
                "Cannot write in \(directory) (creating the lock file: \(String(cString: strerror(createError)))).")
        }
        let operation = (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB
        var rc: Int32
        repeat { rc = flock(fd, operation) } while rc != 0 && errno == EINTR
        guard rc == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            _ = Foundation.close(fd)
            guard busy else { throw StoreError.fileSystem("Cannot lock \(path): \(reason).") }
            switch mode {
            case .shared:
                throw StoreError.storeInUse(
                    "A key rotation or migration is running on \(database.path); open the store when it has finished.")
            case .exclusive:
                throw StoreError.storeInUse(
                    "The store at \(database.path) is open in another program; close it before changing its keys.")
            }
        }
        return StoreLock(descriptor: fd)
    }

    /// Turns a lock taken exclusively into a shared one on the same open file, so a store can
    /// open right after a recovery without letting go of it. (Released and taken again on a new
    /// descriptor, it could collide with itself: a child process spawned meanwhile shares the old
    /// open file, and its exclusive lock, until it execs.)
    ///
    /// - Parameter database: The store's database, for the message of a refusal.
    /// - Throws: ``StoreError/storeInUse(_:)`` when another process took the lock exclusively
    ///   while it changed mode (`flock` converts a lock by releasing it first).
    package func downgradeToShared(for database: URL) throws {
        var rc: Int32
        repeat { rc = flock(descriptor, LOCK_SH | LOCK_NB) } while rc != 0 && errno == EINTR
        guard rc == 0 else {
            throw StoreError.storeInUse(
                "A key rotation or migration is running on \(database.path); open the store when it has finished.")
        }
    }
}
