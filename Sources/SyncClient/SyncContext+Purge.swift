import Logging
import SyncStore
import SyncWire

extension SyncContext {
    /// Deletes local rows of `table` (docs/protocol.md §1.5.5). See
    /// ``SyncTable/purge(_:queryId:force:)``.
    func purge(table: String, query: Query?, queryId: String?, force: Bool) async throws {
        if let queryId { try PullValidation.checkQueryId(queryId) }
        let filter = query?.options.filter
        try await exclusive(cancelled: SyncError(.purgeCancelled, reason: "The purge was cancelled before it ran.")) { _ in
            try await write { writer in
                let pending = try writer.operationCount(table: table)
                if pending > 0 && !force {
                    throw SyncError(
                        .purgeBlockedByPendingOperations, reason: "The table cannot be purged because it has pending operations.")
                }
                if pending > 0 && filter != nil {
                    throw SyncError(.invalidPurgeQuery, reason: "A force purge of a table with pending operations purges the whole table.")
                }
                if force {
                    try writer.deleteOperations(table: table)
                    try writer.deleteConfigValues(withPrefix: DeltaToken.prefix(table: table))
                    try ClashRecords.update(table: table, adding: [], ending: nil, in: writer)
                }
                if let queryId { try writer.deleteConfigValue(forKey: DeltaToken.key(table: table, queryId: queryId)) }
                if let filter {
                    try writer.delete(QueryDescription(table: table, filter: filter))
                } else {
                    try writer.deleteAll(table: table)
                }
            }
        }
        emit(.purged(table: table))
        logger.debug("Purged", metadata: ["table": "\(table)", "force": "\(force)"])
    }
}
