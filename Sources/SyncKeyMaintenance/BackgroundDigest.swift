import Dispatch
import Foundation
import SyncKeys
import SyncSQLite
import Synchronization

/// A value computed on another thread while the caller goes on (a content digest while the
/// re-encryption exports, a key envelope's key derivation while a store is encrypted).
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

/// The ``DatabaseDigest`` of a database file, computed on a connection of its own on another
/// thread (``BackgroundWork``).
///
/// The caller must keep every writer away until ``BackgroundWork/result()`` returns (the store's
/// exclusive lock).
enum BackgroundDigest {
    /// Starts computing the digest of `database`, opened with `key` (`nil`: plain).
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - key: Its raw key, or `nil` for a plain database.
    /// - Returns: The computation.
    static func start(_ database: URL, key: UnsafeRawBufferPointer?) -> BackgroundWork<DatabaseDigest> {
        // The key crosses threads in a wiped buffer, never in an array.
        let key = key.map { key in SecretBytes(count: key.count) { $0.copyMemory(from: key) } }
        return BackgroundWork {
            let connection: Connection
            if let key {
                connection = try key.withUnsafeBytes { try Reencryption.openExisting(database, key: $0) }
            } else {
                connection = try Reencryption.openExisting(database, key: nil)
            }
            defer { connection.close() }
            return try DatabaseDigest.compute(connection)
        }
    }
}
