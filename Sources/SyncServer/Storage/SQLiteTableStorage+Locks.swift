/// Bounded waits for SQLite's write lock (docs/deploy.md, "Storage outages"): one process serves
/// a file, but another one (a backup, an `sqlite3` shell) may hold it locked. A write waits for
/// the lock until its deadline, taken when it reached the storage, so writes queued behind a
/// locked file all give up within about ``SQLiteTableStorage/lockWait`` rather than one after
/// another; a write that gives up ran no statement and is answered 503.
extension SQLiteTableStorage {
    /// How long one try waits inside SQLite before the storage lets its other calls run and tries
    /// again (the connection's busy timeout meanwhile; other statements wait up to ``lockWait``).
    static let lockTry: Duration = .milliseconds(10)

    /// The deadline of a write reaching the storage now.
    nonisolated func lockDeadline() -> ContinuousClock.Instant {
        .now + lockWait
    }

    /// Runs `body`, whose statements take the write lock, trying again while another process
    /// holds the lock until `deadline` at most. Between tries the storage's other calls run (its
    /// reads, and the writes that reach it, which take their own deadlines).
    ///
    /// - Throws: ``StorageUnavailableError`` (busy) when the lock was still held at the
    ///   deadline; what `body` throws otherwise.
    func locking<T>(by deadline: ContinuousClock.Instant, _ body: () throws -> T) async throws -> T {
        connection.waitForLocks(upTo: Self.lockTry)
        defer { connection.waitForLocks(upTo: lockWait) }
        while true {
            do {
                return try body()
            } catch let error as ServerSQLiteError where error.isLocked {
                guard ContinuousClock.now < deadline else { throw StorageUnavailableError(.busy, timeout: lockWait) }
                // A pause before the next try (not a synchronisation: the lock is tried again).
                try? await Task.sleep(for: Self.lockTry)
            }
        }
    }
}
