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

    /// Starts `work` on another thread.
    ///
    /// - Parameter work: The computation; what it throws is thrown by ``result()``.
    init(_ work: @escaping @Sendable () throws -> Value) {
        done.enter()
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            defer { done.leave() }
            let result = Result<Value, any Error> { try work() }
            outcome.withLock { $0 = result }
        }
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
    ///   - parts: What the check runs (both by default).
    /// - Returns: The computation; its result is the copy's digest (`nil` for an integrity check alone).
    static func start(
        _ url: URL, key: UnsafeRawBufferPointer, parts: Reencryption.CopyCheckParts = .integrityAndDigest
    ) -> BackgroundWork<DatabaseDigest?> {
        // The key crosses threads in a wiped buffer, never in an array.
        let key = SecretBytes(count: key.count) { $0.copyMemory(from: key) }
        return BackgroundWork { try key.withUnsafeBytes { try Reencryption.checkedDigest(of: url, key: $0, parts: parts) } }
    }
}

/// The content digest of a database that nothing writes, on a connection of its own on another
/// thread (``BackgroundWork``): the source of a copy that is re-encrypted in place.
///
/// The caller must keep every writer away from the database until ``BackgroundWork/result()`` returns.
enum BackgroundDigest {
    /// Starts computing the digest of the database at `url`, opened with `key`.
    ///
    /// - Parameters:
    ///   - url: The database.
    ///   - key: Its raw key.
    /// - Returns: The computation; its result is the database's digest.
    static func start(_ url: URL, key: UnsafeRawBufferPointer) -> BackgroundWork<DatabaseDigest> {
        // The key crosses threads in a wiped buffer, never in an array.
        let key = SecretBytes(count: key.count) { $0.copyMemory(from: key) }
        return BackgroundWork {
            try key.withUnsafeBytes { key in
                let connection = try Reencryption.openExisting(url, key: key)
                defer { connection.close() }
                return try DatabaseDigest.compute(connection)
            }
        }
    }
}
