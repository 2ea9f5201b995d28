import SyncClient
import SyncStore
import Testing

@testable import SyncClient

/// The collapse table of docs/protocol.md §1.3 as a pure function, over every (existing, new) pair.
@Suite struct OperationCondensingTests {
    typealias Kind = TableOperation.Kind
    typealias State = TableOperation.State

    static let states: [State] = [.pending, .attempted, .failed]

    /// The decision the table prescribes for each pair, given the pending operation's state.
    static func expected(_ existing: Kind?, _ state: State, _ new: Kind) -> CondenseAction {
        guard let existing else { return .add }
        switch (existing, new) {
        case (.insert, .insert), (.update, .insert): return .reject
        case (.delete, .insert), (.delete, .update), (.delete, .delete): return .reject
        case (.insert, .update), (.update, .update): return .keep
        case (.insert, .delete): return state == .attempted ? .refuseUntilPushed : .cancelBoth
        case (.update, .delete): return .convertToDelete
        }
    }

    static let pairs: [(Kind?, Kind)] = [nil, Kind.insert, .update, .delete].flatMap { existing in
        Kind.allCases.map { (existing, $0) }
    }

    @Test(arguments: pairs)
    func everyPairFollowsTheTable(existing: Kind?, new: Kind) {
        for state in Self.states {
            #expect(
                CondenseAction.condense(existing: existing, existingState: state, new: new)
                    == Self.expected(existing, state, new),
                "existing \(String(describing: existing)) (\(state)), new \(new)")
        }
    }

    @Test(arguments: Kind.allCases)
    func nothingMayFollowADelete(new: Kind) {
        for state in Self.states {
            #expect(CondenseAction.condense(existing: .delete, existingState: state, new: new) == .reject)
        }
    }

    @Test(arguments: [Kind.insert, .update, .delete])
    func anInsertMayNotFollowAnything(existing: Kind) {
        #expect(CondenseAction.condense(existing: existing, new: .insert) == .reject)
    }

    @Test func anInsertThatMayHaveReachedTheServerIsNotCancelledByADelete() {
        #expect(CondenseAction.condense(existing: .insert, existingState: .pending, new: .delete) == .cancelBoth)
        #expect(CondenseAction.condense(existing: .insert, existingState: .failed, new: .delete) == .cancelBoth)
        #expect(CondenseAction.condense(existing: .insert, existingState: .attempted, new: .delete) == .refuseUntilPushed)
    }

    /// A failed insert whose refusal showed the server's item: the delete goes to that item.
    @Test func anInsertRefusedBecauseTheServerHasTheItemBecomesItsDelete() {
        #expect(CondenseAction.condense(existing: .insert, existingState: .failed, serverHasItem: true, new: .delete) == .convertToDelete)
        #expect(
            CondenseAction.condense(existing: .insert, existingState: .attempted, serverHasItem: true, new: .delete) == .refuseUntilPushed)
    }
}
