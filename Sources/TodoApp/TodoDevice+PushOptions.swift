public import SyncClient

extension TodoDevice {
    /// How the device's pushes send the queue: in batches where the server advertises the batch
    /// extension (`automatic`) or one request per change (`off`), with up to `parallelism`
    /// requests in flight (1 to 16).
    /// - Throws: `SyncError.invalidSetting` when `parallelism` is out of range; nothing changes.
    public func setPushOptions(batching: PushBatching, parallelism: Int) async throws {
        try await context.setPushParallelism(parallelism)
        await context.setPushBatching(batching)
    }

    /// What the device and its server say about syncing: the changes queued here, and what the
    /// server advertises of the batch extension.
    public struct Status: Sendable, Equatable {
        /// Changes queued for the next push.
        public var pendingChanges: Int
        /// The server's batch limits; `nil` when it takes no batches.
        public var batch: BatchCapability?
    }

    /// The changes queued, and what the server advertises (one request).
    /// - Throws: ``TodoError/offline(pending:)`` when the server cannot be reached.
    public func status() async throws -> Status {
        let pending = try await context.pendingOperationsCount
        do {
            return Status(pendingChanges: pending, batch: try await context.serverBatchCapability())
        } catch {
            throw try await translate(error)
        }
    }
}
