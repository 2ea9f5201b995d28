import Foundation
public import SyncClient
import SyncStore
import SyncWire

extension TodoDevice {
    /// Pushes the queue. Throws ``TodoError/offline(pending:)`` when the server cannot be
    /// reached, ``TodoError/conflicts(_:)`` when some changes conflict, ``TodoError/server(_:)``
    /// for other server errors.
    /// - Returns: The number of changes the server accepted.
    @discardableResult
    public func push() async throws -> Int {
        let before = try await context.pendingOperationsCount
        do {
            try await context.push()
        } catch {
            throw try await translate(error)
        }
        return before - (try await context.pendingOperationsCount)
    }

    /// Pulls the server's changes since the last pull (query id `allTodoItems`), then the
    /// metadata of the items' attachments (query id `allTodoAttachments`; their content is
    /// downloaded when exported); pending changes are pushed first.
    /// - Returns: The number of items received (attachment rows not counted).
    @discardableResult
    public func pull() async throws -> Int {
        do {
            let pulled = try await table.pull(Query(), queryId: Self.queryID)
            do {
                _ = try await context.syncTable(table.attachmentsTable).pull(Query(), queryId: Self.attachmentsQueryID)
            } catch let error as SyncError where error.statusCode == 404 {
                // The server has no attachment table for the items yet (none was ever attached).
            }
            return pulled
        } catch {
            throw try await translate(error)
        }
    }

    /// Push (which uploads the content of attachments whose rows reached the server), pull, then
    /// run the attachment transfers that are ready (retries whose back-off has passed, downloads
    /// asked for).
    @discardableResult
    public func sync() async throws -> (pushed: Int, pulled: Int) {
        let pushed = try await push()
        let pulled = try await pull()
        do {
            try await context.transferAttachments()
        } catch {
            throw try await translate(error)
        }
        return (pushed, pulled)
    }

    /// Removes the local copies of the items (not on the server). Without `force` it refuses
    /// while changes are queued; with `force` it drops them too.
    public func purge(force: Bool) async throws {
        try await table.purge(nil, queryId: Self.queryID, force: force)
        try await context.syncTable(table.attachmentsTable).purge(nil, queryId: Self.attachmentsQueryID, force: force)
    }

    /// How to settle a conflict. `restore` is `client` and `accept` is `server` for a change on
    /// the server; for an item deleted on the server (or missing there), `client` and `restore`
    /// restore it with the local change, and `server`, `cancel` and `accept` accept the delete.
    public enum Resolution: String, Sendable, CaseIterable {
        /// Keep the local change, over the server's version; it is pushed again.
        case client
        /// Take the server's item; the local change is dropped.
        case server
        /// Drop the local change and the local row; the server's item comes back on the next pull.
        case cancel
        /// Bring an item deleted on the server back, with the local change.
        case restore
        /// Accept that the server deleted the item: drop the local change and the local row.
        case accept
    }

    /// Settles one push error.
    /// - Returns: what was done: `client`, `server` or `cancel` for a change on the server,
    ///   `restore` or `accept` for an item deleted on the server or missing there.
    /// - Throws: ``TodoError/resolutionWouldRepeat`` when the resolution would send the request the
    ///   server refused, unchanged (nothing was changed: choose another).
    @discardableResult
    public func resolve(_ conflict: TableOperationError, with resolution: Resolution) async throws -> Resolution {
        do {
            return try await settle(conflict, with: resolution)
        } catch SyncError.resolutionWouldRepeat {
            throw TodoError.resolutionWouldRepeat(itemId: conflict.itemId, resolution: resolution.rawValue)
        }
    }

    private func settle(_ conflict: TableOperationError, with resolution: Resolution) async throws -> Resolution {
        switch (conflict.conflict, resolution) {
        case (.deletedOnServer?, .client), (.deletedOnServer?, .restore), (.missingOnServer?, .client), (.missingOnServer?, .restore):
            try await conflict.keepLocalChange()
            return .restore
        case (.deletedOnServer?, _), (.missingOnServer?, _):
            try await conflict.acceptDelete()
            return .accept
        case (_, .client), (_, .restore):
            try await conflict.keepLocalChange()
            return .client
        case (_, .server), (_, .accept):
            if let theirs = conflict.serverItem {
                try await conflict.cancelAndUpdate(theirs)
            } else {
                try await conflict.cancelAndDiscard()
            }
            return .server
        case (_, .cancel):
            try await conflict.cancelAndDiscard()
            return .cancel
        }
    }

    /// A network failure becomes ``TodoError/offline(pending:)``; push conflicts become
    /// ``TodoError/conflicts(_:)``; ids that differ only in case ``TodoError/itemIDCaseClash(_:)``; other server errors (attachments refused for good too)
    /// ``TodoError/server(_:)``.
    func translate(_ error: any Error) async throws -> any Error {
        guard let sync = error as? SyncError else { return error }
        if sync == .pushAbortedByAuthentication || sync == .authenticationRequired { return TodoError.unauthorized }
        if sync == .pushAbortedByNetwork || sync == .transportFailed {
            return TodoError.offline(pending: try await context.pendingOperationsCount)
        }
        if sync == .pushCompletedWithErrors {
            let conflicts = sync.operationErrors.filter(\.isConflict).count
            if conflicts > 0 { return TodoError.conflicts(conflicts) }
            let first = sync.operationErrors.first
            return TodoError.server(first.map { "HTTP \($0.statusCode.map(String.init) ?? "?"): \($0.message)" } ?? sync.description)
        }
        if sync == .itemIDCaseClash {
            return TodoError.itemIDCaseClash(sync.itemIDCaseClashes.map { (local: $0.localId, server: $0.serverId) })
        }
        if sync == .attachmentTransferFailed {
            let status = sync.statusCode.map { "HTTP \($0)" } ?? sync.description
            return TodoError.server("\(status): the server refused \(sync.failedTransfers.count) attachment(s)")
        }
        if sync == .requestFailed || sync == .malformedServerResponse {
            return TodoError.server(sync.statusCode.map { "HTTP \($0)" } ?? sync.description)
        }
        return error
    }
}
