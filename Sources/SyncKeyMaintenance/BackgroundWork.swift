import Dispatch
import Foundation
import SyncKeys
import SyncSQLite
import Synchronization

/// A value computed on another thread while the caller goes on (the check of a re-encrypted
/// copy while the source's digest is computed, a key envelope's key derivation while a store is
/// encrypted).
///
/// The caller must call ``wait()`` before it returns, whatever happened (a `defer`), so that no
/// work (and no connection it opened) outlives the procedure.
final class BackgroundWork<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, any Error>?>(nil)
    private let done = DispatchGroup()

    /// Starts `work` on a thread of its own.
    ///
    /// A thread each, not a dispatch queue: Dispatch sizes its pool by the cores and counts
    /// neither the caller's thread nor its own idle workers reliably, so a second computation
    /// could wait for a worker for a long while (seen: 0.4 s) with a core free.
    ///
    /// - Parameter work: The computation; what it throws is thrown by ``result()``.
    init(_ work: @escaping @Sendable () throws -> Value) {
        done.enter()
        let thread = Thread { [self] in
            defer { done.leave() }
            let result = Result<Value, any Error> { try work() }
            outcome.withLock { $0 = result }
        }
        thread.start()
    }

    /// Waits until the computation has ended.
    func wait() { done.wait() }

    /// Waits for the value.
    ///
    /// - Returns: What the computation returned.
    /// - Throws: What the computation threw.
    func result() throws -> Value {
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            throw StoreError.verificationFailed("a computation on another thread ended without a result")
        }
        return try result.get()
    }
}

/// The check of a re-encrypted copy (``Reencryption/checkedDigest(of:key:parts:)``), run on a
/// connection of its own on another thread (``BackgroundWork``).
///
/// The caller must keep every writer away from the copy until ``BackgroundWork/result()`` returns.
enum BackgroundCheck {
    /// Starts checking the copy at `url`, opened with `key`.
    ///
    /// - Parameters:
    ///   - url: The re-encrypted copy, complete in its file.
    ///   - key: Its raw key.
    ///   - parts: What the check runs.
    /// - Returns: The computation; its result is the copy's digest (`nil` for the integrity check).
    static func start(_ url: URL, key: UnsafeRawBufferPointer, parts: Reencryption.CopyCheckParts) -> BackgroundWork<DatabaseDigest?> {
        // The key crosses threads in a wiped buffer, never in an array.
        let key = SecretBytes(count: key.count) { $0.copyMemory(from: key) }
        return BackgroundWork { try key.withUnsafeBytes { try Reencryption.checkedDigest(of: url, key: $0, parts: parts) } }
    }
}

/// The content digest of a database that nothing writes, on a connection of its own on another
/// thread (``BackgroundWork``): the source of a re-encryption, while its copy is written.
///
/// The caller must keep every writer away from the database until ``BackgroundWork/result()`` returns.
enum BackgroundDigest {
    /// Starts computing the digest of the database at `url`, opened with `key`.
    ///
    /// - Parameters:
    ///   - url: The database.
    ///   - key: Its raw key, or `nil` for a plain database.
    /// - Returns: The computation; its result is the database's digest.
    static func start(_ url: URL, key: UnsafeRawBufferPointer?) -> BackgroundWork<DatabaseDigest> {
        // The key crosses threads in a wiped buffer, never in an array.
        let key = key.map { key in SecretBytes(count: key.count) { $0.copyMemory(from: key) } }
        return BackgroundWork {
            let open = { (key: UnsafeRawBufferPointer?) in
                let connection = try Reencryption.openExisting(url, key: key)
                defer { connection.close() }
                return try DatabaseDigest.compute(connection)
            }
            guard let key else { return try open(nil) }
            return try key.withUnsafeBytes { try open($0) }
        }
    }
}
