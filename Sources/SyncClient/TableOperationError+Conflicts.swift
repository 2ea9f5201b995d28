import SyncStore
import SyncWire

extension TableOperationError {
    /// The kinds of conflict: how the server's copy of the item differs from the local change.
    public enum Conflict: String, Sendable, Hashable, CaseIterable, Codable {
        /// The server has the item with other values or another version (a 409 or 412 with its
        /// copy in ``TableOperationError/serverItem``). Resolve with ``keepLocalChange()`` (use
        /// client), ``cancelAndUpdate(_:)`` with the server's item (use server) or
        /// ``cancelAndDiscard()`` (cancel).
        case changedOnServer
        /// The server has the item deleted: an update answered 2xx with `deleted: true`, or a
        /// refusal whose copy is deleted. Resolve with ``restoreAndUpdate()`` (restore it with
        /// the local change) or ``acceptDelete()``.
        case deletedOnServer
        /// The server does not have the item (a refusal whose item cannot be read by id, nor
        /// through a `$filter` on the id).
        /// Resolve with ``keepLocalChange()`` (insert it again) or ``acceptDelete()``.
        case missingOnServer
    }

    /// "Use client": keeps the local change and queues it again over the server's copy, so that
    /// the next push wins — whatever the kind of conflict:
    ///
    /// - changed on the server: the change is sent again with the server's `version` (an insert
    ///   becomes an update of the server's item, never a second insert);
    /// - deleted on the server: as ``restoreAndUpdate()``;
    /// - missing on the server: the item is inserted again (a delete has nothing left to do and
    ///   is dropped);
    /// - not a conflict (a 400, a 5xx): the operation is sent again as it is.
    ///
    /// - Throws: ``SyncError/resolutionWouldRepeat`` when the change would go again as the very
    ///   request the server refused (an insert refused with a 409 whose item the server does not
    ///   show: it would be refused again, forever); ``SyncError/operationNotFound``,
    ///   ``SyncError/operationChanged``, ``SyncError/localStoreFailed``; for an item deleted on the
    ///   server, the errors of ``restoreAndUpdate()``. Nothing changes when it throws.
    public func keepLocalChange() async throws {
        switch conflict {
        case .deletedOnServer?:
            try await restoreAndUpdate()
        case .missingOnServer?:
            if kind == .delete {
                try await context.resolve(self, .cancelAndDiscard)
            } else {
                try await context.resolve(self, .keep(kind: .insert, item: nil))
            }
        case .changedOnServer?:
            guard let version = serverItem?[SystemProperty.version], !version.isNull else {
                return try await context.resolve(self, .keep(kind: kind, item: nil))
            }
            var mine = item ?? [:]
            mine[SystemProperty.version] = version
            try await context.resolve(self, .keep(kind: kind == .insert ? .update : kind, item: mine))
        case nil:
            try await context.resolve(self, .keep(kind: kind, item: nil))
        }
    }

    /// Restores an item the server has deleted and keeps the local change over it: sends the G2
    /// undelete (`POST /tables/{table}/{id}`, `If-Match` the deleted copy's version) now, takes
    /// the restored version (the answer's item's, else its `ETag`; with neither, the deleted
    /// copy's version stays, so the update cannot overwrite blindly), and queues the local values
    /// as an update for the next push. If the server no longer has the item at all (404, 410),
    /// the local item is queued as an insert.
    ///
    /// - Throws: ``SyncError/operationNotAllowed`` when the error is not
    ///   ``Conflict/deletedOnServer`` or the operation is a delete; ``SyncError/operationNotFound``,
    ///   ``SyncError/operationChanged`` (checked before anything is sent, and again after);
    ///   ``SyncError/preconditionFailed`` (the server changed the item again: push again for a
    ///   fresh conflict), ``SyncError/transportFailed``, ``SyncError/authenticationRequired``,
    ///   ``SyncError/requestFailed``, ``SyncError/localStoreFailed``;
    ///   ``SyncError/resolutionWouldRepeat`` when the server no longer has the item and the insert
    ///   to queue is the request it refused. The queue is unchanged when it throws.
    public func restoreAndUpdate() async throws {
        try await context.restore(self)
    }

    /// Accepts that the server deleted the item (or does not have it): drops the operation (and
    /// its errors) and the local row. The same as ``cancelAndDiscard()``, named for the
    /// conflicts ``Conflict/deletedOnServer`` and ``Conflict/missingOnServer``.
    /// - Throws: ``SyncError/operationNotFound``, ``SyncError/operationChanged``,
    ///   ``SyncError/localStoreFailed``.
    public func acceptDelete() async throws {
        try await context.resolve(self, .cancelAndDiscard)
    }
}
