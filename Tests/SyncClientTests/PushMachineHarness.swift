import Foundation
import SyncStore
import SyncWire

@testable import SyncClient

/// Runs a ``PushMachine`` against a queue in memory, without a store or a server: claims take
/// the queue's next operations, each send is answered by `answer`, each batch by `land`, and
/// every action is written down in a short form (`claim 0..`, `send 3`, `batch 1-4`, …).
struct PushMachineHarness {
    var machine: PushMachine
    /// The queue: operation ids 1…n, of table `t` unless `tables` says otherwise.
    var queue: [ClaimedOperation]
    var trace: [String] = []
    /// The answers recorded by claims and the last transaction, in the order they were recorded.
    var recorded: [AnsweredOperation] = []
    var released: [ClaimedOperation] = []
    /// Sent side by side and not answered yet, in the order sent.
    var inFlight: [ClaimedOperation] = []
    /// Which in-flight operation is answered next (default: the oldest).
    var pick: ([ClaimedOperation]) -> Int = { _ in 0 }
    var answer: (ClaimedOperation) -> PushMachine.Outcome = { _ in .success(nil) }
    /// The reply to a batch, given whether the sender's turn was restarted before.
    var land: ([ClaimedOperation], Bool) -> PushMachine.Landing = { group, _ in .answered(group.map { _ in .success(nil) }) }
    private var restarted = false
    /// Whether a batch body is larger than the server takes.
    var oversized: ([ClaimedOperation]) -> Bool = { _ in false }
    /// Whether the run is cancelled before the `n`th action.
    var cancelAt: Int?
    /// Whether claims made now fail; which claim made ahead fails (1: the first).
    var failClaims = false
    var failAheadAt: Int?
    private var aheadTaken = 0
    private var ahead: (after: Int64, limit: Int, record: [AnsweredOperation])?

    init(
        operations: Int, batchLimit: Int = 1, parallelism: Int = 1, tables: [Int64: String] = [:], itemIds: [Int64: String] = [:],
        itemless: Set<Int64> = []
    ) {
        machine = PushMachine(batchLimit: batchLimit, parallelism: parallelism)
        queue = (0..<operations).map { index in
            let id = Int64(index + 1)
            let itemId = itemIds[id] ?? "i\(id)"
            let record = TableOperationRecord(id: id, kind: .update, table: tables[id] ?? "t", itemId: itemId, state: .pending)
            let item: JSONObject? = itemless.contains(id) ? nil : [SystemProperty.id: .string(itemId)]
            return ClaimedOperation(record: record, item: item, previousState: .pending)
        }
    }

    static func ids(_ operations: [ClaimedOperation]) -> [Int64] { operations.map(\.record.id) }
    static func ids(_ answers: [AnsweredOperation]) -> [Int64] { answers.map(\.sent.id) }

    private func claim(after: Int64, limit: Int) -> [ClaimedOperation] {
        Array(queue.filter { $0.record.id > after }.prefix(limit))
    }

    private static func span(_ group: [ClaimedOperation]) -> String {
        let ids = Self.ids(group)
        guard let first = ids.first, let last = ids.last else { return "" }
        return first == last ? "\(first)" : "\(first)-\(last)"
    }

    /// Runs the push to its end (at most `steps` actions).
    mutating func run(steps: Int = 500) {
        for step in 0..<steps {
            let cancelled = cancelAt.map { step >= $0 } ?? false
            switch machine.next(cancelled: cancelled) {
            case .claim(let record, let after, let limit):
                trace.append("claim \(after)..")
                if failClaims {
                    machine.storeFailed(SyncError(.pushAbortedByLocalStore, reason: "test"))
                } else {
                    recorded += record
                    machine.claimed(claim(after: after, limit: limit))
                }
            case .claimAhead(let record, let after, let limit):
                trace.append("ahead \(after)..")
                ahead = (after, limit, record)
            case .takeAhead:
                trace.append("take ahead")
                aheadTaken += 1
                if aheadTaken == failAheadAt {
                    machine.aheadFailed(SyncError(.pushAbortedByLocalStore, reason: "test"))
                } else if let (after, limit, record) = ahead {
                    recorded += record
                    _ = machine.aheadClaimed(claim(after: after, limit: limit))
                }
                ahead = nil
            case .send(let next):
                trace.append("send \(next.record.id)")
                machine.answered(answer(next), of: next)
            case .sendAlongside(let next):
                trace.append("send \(next.record.id)")
                inFlight.append(next)
            case .awaitAlongside:
                let answered = inFlight.remove(at: pick(inFlight))
                trace.append("answer \(answered.record.id)")
                _ = machine.answeredAlongside(answered.record.id, outcome: answer(answered))
            case .writeBatch(let group):
                if oversized(group) {
                    trace.append("too big \(Self.span(group))")
                    machine.batchOversized()
                } else {
                    trace.append("batch \(Self.span(group))")
                    machine.batchHanded()
                }
            case .awaitBatch(let oldest):
                trace.append("land \(Self.span(oldest))")
                _ = machine.batchLanded(land(oldest, restarted))
            case .restartTurn:
                trace.append("restart turn")
                restarted = true
            case .endBatches:
                trace.append("end batches")
            case .finish(let record, let release):
                trace.append("finish")
                recorded += record
                released += release
                return
            }
        }
        trace.append("no end")
    }
}
