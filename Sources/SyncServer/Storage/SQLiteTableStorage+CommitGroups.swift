/// Single writes to a file that share a commit (group commit).
///
/// A file's commit waits for the disk (WAL, `synchronous = FULL`: ~150 µs here, more under load),
/// and the storage's one connection commits one transaction at a time. So a single write to a
/// file does not commit alone: it runs its statement in the open *commit group* (a transaction
/// begun by the first write of the group) and returns once that transaction has committed. The
/// first write commits the group after the writes already waiting for the storage have run, so
/// the writes that arrive while one commit syncs share the next one. Nothing is acknowledged before
/// its commit; a write whose statement fails leaves the group (SQLite undoes the statement
/// alone), unless the engine rolled the whole transaction back: then every write of the group
/// fails with that error. Reads commit the open group first, so that nothing they return can
/// still be rolled back. Memory tables commit each write alone (no sync to share).
final class CommitGroup {
    /// The writes waiting for the commit.
    private var waiters: [CheckedContinuation<Void, any Error>] = []
    /// How the group ended, once it has.
    private(set) var outcome: Result<Void, any Error>?

    /// Waits until the group has committed (at once when it has); throws when it failed.
    func committed(isolation: isolated (any Actor)? = #isolation) async throws {
        if let outcome { return try outcome.get() }
        try await withCheckedThrowingContinuation(isolation: isolation) { waiters.append($0) }
    }

    /// Ends the group and resumes its writes.
    func finish(_ outcome: Result<Void, any Error>) {
        self.outcome = outcome
        for waiter in waiters { waiter.resume(with: outcome) }
        waiters = []
    }
}

extension SQLiteTableStorage {
    /// Whether a single write starting now joins a commit group: tables in a file, outside a batch.
    var joinsCommitGroup: Bool { groupsCommits && Self.transactionOwner != ObjectIdentifier(self) }

    /// Runs a single write's statement alone (``alone(_:)``): in the open commit group when it
    /// joins one (see ``joinsCommitGroup``), returning once the group has committed; otherwise
    /// on its own (memory tables, or inside a batch).
    func committing<T>(_ statement: () throws -> T) async throws -> T {
        guard joinsCommitGroup else { return try await alone { try statement() } }
        let deadline = lockDeadline()
        let (result, group, leads) = try await alone { () async throws -> (T, CommitGroup, Bool) in
            let leads = commitGroup == nil
            let group = try await openCommitGroup(lockedBy: deadline)
            do {
                return (try statement(), group, leads)
            } catch {
                if connection.isAutocommit {
                    // The engine rolled back the whole transaction, not only the statement.
                    if commitGroup === group { endCommitGroup(.failure(error)) }
                } else if leads {
                    // The group has no other write yet, and none would commit it.
                    settleCommitGroup()
                }
                throw error
            }
        }
        if leads {
            // The writes already waiting for this actor run first and join the group; then it
            // commits (unless a read or a batch committed it meanwhile).
            await Task.yield()
            if commitGroup === group { settleCommitGroup() }
        }
        try await group.committed()
        return result
    }

    /// Commits the open commit group, if any (before a read, a batch or closing).
    func settleCommitGroup() {
        guard commitGroup != nil else { return }
        do {
            try connection.run("COMMIT")
            endCommitGroup(.success(()))
        } catch {
            endCommitGroup(.failure(error))
        }
    }

    // MARK: helpers

    /// The open commit group, or a new one (its transaction begun, the write lock taken by
    /// `deadline`).
    private func openCommitGroup(lockedBy deadline: ContinuousClock.Instant) async throws -> CommitGroup {
        if let commitGroup { return commitGroup }
        try await locking(by: deadline) { try connection.run("BEGIN IMMEDIATE") }
        let group = CommitGroup()
        commitGroup = group
        return group
    }

    /// Ends the open group: on failure its transaction is rolled back (when the engine has not
    /// already) and the cached schemas are read again (the group may have added columns).
    private func endCommitGroup(_ outcome: Result<Void, any Error>) {
        guard let group = commitGroup else { return }
        commitGroup = nil
        if case .failure = outcome {
            if !connection.isAutocommit { try? connection.run("ROLLBACK") }
            try? rereadSchemas()
        }
        group.finish(outcome)
    }
}
