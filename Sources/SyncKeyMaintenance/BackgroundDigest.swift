import Dispatch
import Foundation
import SyncKeys
import SyncSQLite
import Synchronization

/// The ``DatabaseDigest`` of a database file, computed on a connection of its own on another
/// thread while the caller goes on (the re-encryption exports meanwhile).
///
/// The caller must keep every writer away until ``result()`` returns (the store's exclusive lock)
/// and must call ``wait()`` before it returns, whatever happened (a `defer`), so that no
/// connection outlives the procedure.
final class BackgroundDigest: Sendable {
    private let outcome = Mutex<Result<DatabaseDigest, any Error>?>(nil)
    private let done = DispatchGroup()

    /// Starts computing the digest of `database`, opened with `key` (`nil`: plain).
    ///
    /// - Throws: ``StoreError`` when the key cannot be copied for the other thread.
    init(_ database: URL, key: UnsafeRawBufferPointer?) throws {
        // The key crosses threads in a wiped buffer, never in an array.
        let key = key.map { key in SecretBytes(count: key.count) { $0.copyMemory(from: key) } }
        done.enter()
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            defer { done.leave() }
            let result = Result<DatabaseDigest, any Error> {
                let connection: Connection
                if let key {
                    connection = try key.withUnsafeBytes { try Reencryption.openExisting(database, key: $0) }
                } else {
                    connection = try Reencryption.openExisting(database, key: nil)
                }
                defer { connection.close() }
                return try DatabaseDigest.compute(connection)
            }
            outcome.withLock { $0 = result }
        }
    }

    /// Waits until the computation has ended (its connection closed).
    func wait() { done.wait() }

    /// Waits for the digest.
    ///
    /// - Returns: The digest of the database.
    /// - Throws: What opening the database or computing the digest threw.
    func result() throws -> DatabaseDigest {
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            throw StoreError.verificationFailed("the content digest of the source was not computed")
        }
        return try result.get()
    }
}
