import Foundation
package import PostgresNIO
import SyncWire
import Synchronization

/// The `updatedAt` of a write, as every storage takes it under its table's write serialisation:
/// milliseconds since 1970, strictly increasing per table (see ``TableStorage``).
///
/// ``StampClock`` keeps the last stamp of each table for a storage whose process is the only
/// writer (SQLite); a storage shared by several processes keeps it in the database instead.
public enum WriteStamp {
    /// The stamp of the next write of a table: now, or one millisecond after the table's last
    /// stamp when the clock has not moved past it (several writes in one millisecond, a clock
    /// set back, another instance's clock ahead).
    ///
    /// - Parameters:
    ///   - last: The table's last stamp, in milliseconds, or `nil` for a table never stamped.
    ///   - now: The current time in milliseconds.
    /// - Returns: The stamp, greater than `last`.
    public static func next(after last: Int64?, now: Int64 = WriteStamp.now()) -> Int64 {
        guard let last else { return now }
        return max(now, last + 1)
    }

    /// The current time in whole milliseconds since 1970.
    public static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The wire text of a stamp: `2001-02-03T04:05:06.789Z`.
    ///
    /// - Parameter milliseconds: The stamp.
    /// - Returns: The text stored in `createdAt` and `updatedAt`.
    public static func text(_ milliseconds: Int64) -> String {
        WireDate.string(milliseconds: milliseconds)
    }
}

/// The last stamp of each table, for a storage whose process is the only writer of its
/// database: ``next(for:)`` must be called under the database's write serialisation (inside the
/// write statement), so that stamps increase in commit order. A class whose state sits behind a
/// `Mutex`; safe to share.
public final class StampClock: Sendable {
    private let last = Mutex<[String: Int64]>([:])

    /// A clock with no table stamped yet.
    public init() {}

    /// Records a table's newest stamp (read from its rows when the storage opens).
    ///
    /// - Parameters:
    ///   - milliseconds: The newest `updatedAt` of the table's rows, if it has any.
    ///   - table: The table's key (its name with ASCII letters folded).
    public func start(at milliseconds: Int64?, for table: String) {
        last.withLock { $0[table] = milliseconds }
    }

    /// The next stamp of a table, recorded as its last.
    ///
    /// - Parameter table: The table's key.
    /// - Returns: The stamp's wire text.
    public func next(for table: String) -> String {
        let stamp = last.withLock { last in
            let next = WriteStamp.next(after: last[table])
            last[table] = next
            return next
        }
        return WriteStamp.text(stamp)
    }
}

/// Row versions: opaque, new on every write.
public enum RowVersion {
    /// The bytes of a version.
    static let length = 12

    /// Random bytes from the system's generator, drawn 256 at a time (a draw is a system call;
    /// a version needs 12 bytes), and how many of them are used.
    private static let pool = Mutex<(bytes: [UInt8], used: Int)>(([UInt8](repeating: 0, count: 256), 256))

    /// A new version: 12 random bytes, base64.
    public static func make() -> String {
        let version = pool.withLock { pool -> Data in
            if pool.used + length > pool.bytes.count {
                let status = pool.bytes.withUnsafeMutableBytes { getentropy($0.baseAddress, $0.count) }
                // getentropy fails only for more than 256 bytes or a bad address.
                precondition(status == 0, "the system's random generator failed")
                pool.used = 0
            }
            defer {
                // Each byte is handed out once.
                for i in pool.used..<(pool.used + length) { pool.bytes[i] = 0 }
                pool.used += length
            }
            return Data(pool.bytes[pool.used..<(pool.used + length)])
        }
        return version.base64EncodedString()
    }
}

/// A step of a write, as a ``WriteObserver`` sees it.
package enum WriteStep: Sendable, Hashable {
    /// The write is about to wait for its table's write serialisation (an engine that takes it
    /// before its statement, such as a lock in PostgreSQL, reports this; SQLite's statements
    /// take it themselves).
    case waiting
    /// The write's last step before it commits: it holds the table's serialisation if the engine
    /// takes one before its statement, and carries its stamp if it was taken then; `nil` when
    /// the statement takes its own stamp (SQLite). A test holding a write here makes it the last
    /// to commit.
    case committing(updatedAt: String?)
    /// The write committed, or found its condition unmet; it holds nothing any more.
    case finished
}

/// Sees each step of every write of a storage: a seam for tests, which can hold a write at a
/// step (the storage waits for ``write(_:table:id:)`` to return). `nil` in production.
package protocol WriteObserver: Sendable {
    /// Called at each step of a write.
    ///
    /// - Parameters:
    ///   - step: The step reached.
    ///   - table: The table written, as the request named it.
    ///   - id: The id written, as the request spelled it.
    func write(_ step: WriteStep, table: String, id: String) async

    /// Called when the storage's connection that listens to other instances' changes starts
    /// listening, and when it was lost (before it is tried again). The default does nothing.
    ///
    /// - Parameter event: What happened.
    func listening(_ event: ListenerEvent) async

    /// Called when the listening connection has connected, before it sends `LISTEN` on it (the
    /// storage waits for the call to return). The default does nothing.
    ///
    /// - Parameter connection: The new connection.
    func listenerConnected(_ connection: PostgresConnection) async
}

extension WriteObserver {
    /// Does nothing.
    ///
    /// - Parameter event: What happened.
    package func listening(_ event: ListenerEvent) async {}

    /// Does nothing.
    ///
    /// - Parameter connection: The new connection.
    package func listenerConnected(_ connection: PostgresConnection) async {}
}

/// What happened to a storage's listening connection (PostgreSQL's `LISTEN`), as a
/// ``WriteObserver`` sees it.
package enum ListenerEvent: Sendable, Hashable {
    /// The connection listens (the first time, or again after it was lost); the storage has
    /// announced that anything may have changed meanwhile.
    case listening
    /// The connection was lost; it is tried again after a delay.
    case lost
}
