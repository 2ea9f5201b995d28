import SyncStore

/// What to do with the queue when a new local write meets the pending operation of the same item
/// (docs/protocol.md §1.3). A pure decision table, tested over every pair.
enum CondenseAction: Sendable, Hashable {
    /// No pending operation: append a new one.
    case add
    /// Keep the pending operation (it will send the item's current values); bump its version.
    case keep
    /// Remove the pending operation and queue nothing (an insert never sent, then deleted).
    case cancelBoth
    /// Rewrite the pending operation into a delete, in place (it keeps its queue position).
    case convertToDelete
    /// The write is not allowed until the pending operation is pushed or discarded: an insert
    /// that may exist on the server cannot be cancelled by a delete
    /// (``SyncError/operationNotAllowed``, "push first"); nothing changes.
    case refuseUntilPushed
    /// The write is not allowed (``SyncError/operationNotAllowed``); nothing changes.
    case reject
}

extension CondenseAction {
    /// The action for a new operation of kind `new` when `existing` is pending for the same item.
    ///
    /// - Insert then insert, update then insert, and anything after a delete: rejected.
    /// - Insert then update, update then update: keep the pending operation (its push sends the
    ///   row's current values).
    /// - Insert then delete: if the insert may exist on the server (it was sent and no outcome
    ///   was recorded, or it got no answer, a 408 or a 5xx: ``TableOperation/State/attempted``),
    ///   the delete is refused until the insert is pushed or discarded; if its refusal showed
    ///   that the server has the item (`serverHasItem`), the insert becomes a delete of the
    ///   server's copy; otherwise (never sent, or clearly refused) both are cancelled and nothing
    ///   is sent.
    /// - Update then delete: the update becomes a delete in place.
    static func condense(
        existing: TableOperation.Kind?, existingState: TableOperation.State = .pending, serverHasItem: Bool = false,
        new: TableOperation.Kind
    ) -> CondenseAction {
        guard let existing else { return .add }
        switch (existing, new) {
        case (.delete, _), (_, .insert): return .reject
        case (.insert, .update), (.update, .update): return .keep
        case (.insert, .delete):
            if existingState == .attempted { return .refuseUntilPushed }
            return serverHasItem ? .convertToDelete : .cancelBoth
        case (.update, .delete): return .convertToDelete
        }
    }
}
