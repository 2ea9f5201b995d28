import Foundation
public import SyncClient
import SyncWire
import SyncStore

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

    /// Pulls the server's changes since the last pull (query id `allTodoItems`); pending changes
    /// are pushed first.
    /// - Returns: The number of items received.
    @discardableResult
    public func pull() async throws -> Int {
        do {
            return try await table.pull(Query(), queryId: Self.queryID)
        } catch {
            throw try await translate(error)
        }
    }

    /// Push, then pull.
    @discardableResult
    public func sync() async throws -> (pushed: Int, pulled: Int) {
        let pushed = try await push()
        let pulled = try await pull()
        return (pushed, pulled)
    }

    /// Removes the local copies of the items (not on the server). Without `force` it refuses
    /// while changes are queued; with `force` it drops them too.
    public func purge(force: Bool) async throws {
        try await table.purge(nil, queryId: Self.queryID, force: force)
    }

    /// How to settle a conflict.
    public enum Resolution: String, Sendable, CaseIterable {
        /// Keep the local change, over the server's version; it is pushed again.
        case client
        /// Take the server's item; the local change is dropped.
        case server
        /// Drop the local change and the local row; the server's item comes back on the next pull.
        case cancel
    }

    /// Settles one push error.
    public func resolve(_ conflict: TableOperationError, with resolution: Resolution) async throws {
        switch resolution {
        case .client:
            var mine = conflict.item ?? [:]
            if let version = conflict.serverItem?["version"] { mine["version"] = version }
            if conflict.kind == .delete {
                try await conflict.changeOperationType(to: .delete, item: mine)
            } else {
                try await conflict.keepAndUpdate(mine)
            }
        case .server:
            if let theirs = conflict.serverItem {
                try await conflict.cancelAndUpdate(theirs)
            } else {
                try await conflict.cancelAndDiscard()
            }
        case .cancel:
            try await conflict.cancelAndDiscard()
        }
    }

    /// A network failure becomes ``TodoError/offline(pending:)``; push conflicts become
    /// ``TodoError/conflicts(_:)``; other server errors ``TodoError/server(_:)``.
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
        if sync == .requestFailed || sync == .malformedServerResponse {
            return TodoError.server(sync.statusCode.map { "HTTP \($0)" } ?? sync.description)
        }
        return error
    }
}
