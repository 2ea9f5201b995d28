import SyncStore
import SyncWire

/// A push as a value: what it has claimed, sent and not recorded, and how it sends. The push's
/// driver (``SyncContext/runPush(_:)``) asks it what to do next (``next(cancelled:)``), does that
/// — a store transaction, a request, waiting for an answer — and reports back what came of it;
/// the machine does no I/O, so its rules are tested without a store or a server.
///
/// Three sending policies share the claims, the recording and the stop rules:
/// - **serial**: one request per operation, in queue order; the next operations are claimed one
///   store transaction ahead (``Action/claimAhead(record:after:limit:)``) while these are sent;
/// - **parallel**: up to ``parallelism`` requests in flight, a window sliding along the queue; an
///   operation waits while an earlier operation of its item is in flight, and the answers are
///   recorded in queue order;
/// - **batched**: consecutive operations of one table in one request (the batch extension),
///   handed to a sender that sends them one after the other; the push keeps ``batchesReady``
///   batches ready beside the one at the server. A batch of which nothing was applied comes back,
///   with the batches handed after it, in front of the unsent operations; a 413 halves the batch
///   limit, a server without the batch route turns the push to single requests (serial, or
///   parallel when set).
///
/// Every answer the server gave is recorded, also those after an abort (operations in flight
/// side by side, later results of a batch); operations claimed and never sent are released.
struct PushMachine {
    /// What the driver does next.
    enum Action {
        /// Records `record` and claims up to `limit` operations after the id `after`, in one store
        /// transaction, now: then ``claimed(_:)`` or ``storeFailed(_:)``.
        case claim(record: [AnsweredOperation], after: Int64, limit: Int)
        /// The same transaction in the background, while the claimed operations are sent; the
        /// driver asks for the next action at once. Its result is awaited at ``takeAhead``.
        case claimAhead(record: [AnsweredOperation], after: Int64, limit: Int)
        /// Awaits the claim made ahead: then ``aheadClaimed(_:)`` or ``aheadFailed(_:)``.
        case takeAhead
        /// Sends one operation and awaits its outcome: then `answered(_:of:)`.
        case send(ClaimedOperation)
        /// Sends one operation beside those in flight (parallel); its outcome is reported
        /// through ``answeredAlongside(_:outcome:)`` when it comes.
        case sendAlongside(ClaimedOperation)
        /// Awaits the next outcome of an operation in flight side by side.
        case awaitAlongside
        /// Writes the batch request of these operations (consecutive, of one table): then
        /// ``batchHanded()`` once it is handed to the sender, ``batchOversized()`` when its body
        /// is larger than the server takes, or ``batchUnwritable(_:)``.
        case writeBatch([ClaimedOperation])
        /// Awaits the sender's reply to the oldest batch handed (these operations): then
        /// ``batchLanded(_:)``.
        case awaitBatch([ClaimedOperation])
        /// Ends the sender's turn: of the batches handed from before, it sends none not sent yet.
        case restartTurn
        /// No more batches: ends the sender's turn and its stream of batches.
        case endBatches
        /// Records `record` and releases `release` (claimed, never sent) in one store transaction
        /// (none when both are empty; ``storeFailed(_:)`` when it fails); the push is over, and
        /// ``abort`` says whether it stopped early.
        case finish(record: [AnsweredOperation], release: [ClaimedOperation])
    }

    /// How one sent operation ended, before it is recorded.
    enum Outcome: Sendable {
        case success(JSONObject?)
        case failure(PushFailure)
        case abort(SyncError)
    }

    /// What became of a batch handed to the sender.
    enum Landing {
        /// One outcome per operation, in order (a single abort when no result can be read).
        case answered([Outcome])
        /// The server has no batch route: nothing was applied.
        case unsupported
        /// The request was larger than the server takes (413): nothing was applied.
        case tooLarge
        /// Not sent: its turn had ended, or the push was cancelled.
        case notSent
    }

    private enum Stage {
        case batches
        case drainingBatches
        case singles
        case done
    }

    /// Where a refill (a claim when none are left, and the claim ahead) is.
    private enum Refill {
        case idle
        case tookAhead
        case claimed
    }

    /// The operations a push claims (and whose answers it records) per store transaction.
    static let claimSize = 64
    /// The batches a push keeps ready beside the one at the server, so that a slow step of its
    /// own (a store checkpoint) does not keep the server waiting.
    static let batchesReady = 2

    /// Requests side by side (1: serial).
    let parallelism: Int
    /// The most operations per request (1: no batches).
    private(set) var batchLimit: Int
    /// Why the push stops early.
    private(set) var abort: SyncError?
    /// The id of the last operation claimed.
    private(set) var last: Int64 = 0
    /// Claimed and not sent yet, the next one last.
    private(set) var claimed: [ClaimedOperation] = []
    /// Sent, the answer not recorded yet.
    private(set) var answered: [AnsweredOperation] = []
    private var stage: Stage
    /// The answers the claim ahead records, while it runs.
    private var aheadRecording: [AnsweredOperation]?
    private var refill = Refill.idle
    /// Parallel: the last refill found nothing; sent and not taken yet, in queue order; the
    /// outcomes by operation id until their turn; an outcome stopped the push.
    private var queueEmpty = false
    private var window: [ClaimedOperation] = []
    private var waiting: [Int64: Outcome] = [:]
    private var stopping = false
    /// Batched: the batches handed and not answered, oldest first; the batch being written; the
    /// batches taken back after one of which nothing was applied; whether the last claim found
    /// nothing; the size the batches ramp up by.
    private var outstanding: [[ClaimedOperation]] = []
    private var writing: [ClaimedOperation]?
    private var takingBack: [[ClaimedOperation]]?
    private var claimFoundNothing = false
    private var ramp: Int

    /// A push about to start.
    /// - Parameters:
    ///   - batchLimit: the most operations per request (1: one request per operation).
    ///   - parallelism: requests side by side for operations sent one request each.
    ///   - abort: why the push stops before it starts, if it does.
    init(batchLimit: Int, parallelism: Int, abort: SyncError? = nil) {
        self.batchLimit = batchLimit
        self.parallelism = parallelism
        self.abort = abort
        stage = batchLimit > 1 ? .batches : .singles
        // Large batches start smaller (a quarter of the limit, at least 256 operations, then
        // twice as large each time): the server starts on the first while the next, larger
        // ones are claimed and written.
        ramp = max(Self.claimSize * 4, batchLimit / 4)
    }

    /// The next thing to do; a cancelled run stops the push (the answers in flight are still
    /// taken and recorded).
    mutating func next(cancelled: Bool) -> Action {
        if abort == nil, cancelled { abort = SyncError.pushWasCancelled() }
        switch stage {
        case .batches: return nextInBatches()
        case .drainingBatches: return nextDraining()
        case .singles: return parallelism > 1 ? nextSideBySide() : nextSerially()
        case .done: return .finish(record: [], release: [])
        }
    }

    // MARK: events

    /// The operations claimed now (in queue order); the answers of the claim are recorded.
    mutating func claimed(_ operations: [ClaimedOperation]) {
        answered = []
        adopt(operations)
    }

    /// A store transaction of the push failed (a claim: its answers are recorded at the end; the
    /// last one: they are recorded by the next push): the push stops.
    mutating func storeFailed(_ error: SyncError) {
        abort = abort ?? error
    }

    /// The operations claimed ahead, after those still claimed.
    /// - Returns: the answers that claim recorded.
    mutating func aheadClaimed(_ operations: [ClaimedOperation]) -> [AnsweredOperation] {
        let recorded = aheadRecording ?? []
        aheadRecording = nil
        adopt(operations)
        return recorded
    }

    /// The claim ahead failed: its answers are to be recorded again, and the push stops.
    mutating func aheadFailed(_ error: SyncError) {
        answered = (aheadRecording ?? []) + answered
        aheadRecording = nil
        abort = abort ?? error
    }

    /// The outcomes of `group`, sent: answers to record, or the abort that stops the push.
    mutating func answered(_ outcomes: [Outcome], of group: [ClaimedOperation]) {
        for (sent, outcome) in zip(group, outcomes) { answered(outcome, of: sent) }
    }

    /// The outcome of one operation sent.
    mutating func answered(_ outcome: Outcome, of sent: ClaimedOperation) {
        switch outcome {
        case .success(let item): answered.append(AnsweredOperation(sent: sent.record, outcome: .success(item)))
        case .failure(let failure): answered.append(AnsweredOperation(sent: sent.record, outcome: .failure(failure)))
        case .abort(let error): abort = abort ?? error
        }
    }

    /// The outcome of the operation `id`, sent side by side.
    /// - Returns: how many operations' outcomes are taken now (in queue order, up to the first
    ///   still in flight).
    mutating func answeredAlongside(_ id: Int64, outcome: Outcome) -> Int {
        if case .abort = outcome { stopping = true }
        waiting[id] = outcome
        var taken = 0
        while let first = window.first, let outcome = waiting.removeValue(forKey: first.record.id) {
            window.removeFirst()
            answered(outcome, of: first)
            taken += 1
        }
        return taken
    }

    /// The batch being written was handed to the sender.
    mutating func batchHanded() {
        guard let group = writing else { return }
        writing = nil
        outstanding.append(group)
        ramp = min(ramp * 2, batchLimit)
    }

    /// The batch being written is larger than the server takes: it is cut in half (the rest goes
    /// back to the unsent operations), down to one operation.
    mutating func batchOversized() {
        guard let group = writing, group.count > 1 else { return }
        let kept = group.count / 2
        claimed.append(contentsOf: group[kept...].reversed())
        writing = Array(group[..<kept])
    }

    /// The batch's request could not be written: its operations go back, and the push stops.
    mutating func batchUnwritable(_ error: SyncError) {
        if let group = writing { claimed.append(contentsOf: group.reversed()) }
        writing = nil
        abort = abort ?? error
    }

    /// The reply to the oldest batch handed. When nothing of it was applied, the batches handed
    /// after it are taken too before the push goes on, and those of which nothing was applied go
    /// back in front of the unsent operations, in queue order.
    /// - Returns: the operations whose outcomes were taken.
    mutating func batchLanded(_ landing: Landing) -> [ClaimedOperation] {
        guard !outstanding.isEmpty else { return [] }
        let group = outstanding.removeFirst()
        switch landing {
        case .answered(let outcomes):
            answered(outcomes, of: group)
            return group
        case .tooLarge:
            // In batches half as large from here (one at a time at the end, where an operation
            // too large alone gets its own 413).
            batchLimit = min(batchLimit, group.count / 2)
        case .unsupported:
            batchLimit = 1
        case .notSent:
            break
        }
        takingBack = (takingBack ?? []) + [group]
        return []
    }

    // MARK: the policies

    private mutating func nextSerially() -> Action {
        guard abort == nil else { return finishing() }
        switch refillAhead() {
        case .act(let action): return action
        case .empty: return finishing()
        case .ready: break
        }
        guard let next = claimed.popLast() else { return finishing() }
        return .send(next)
    }

    private mutating func nextSideBySide() -> Action {
        if !stopping, window.count < parallelism, abort == nil {
            var fill = true
            if claimed.isEmpty || refill != .idle {
                if queueEmpty && !window.isEmpty && refill == .idle {
                    fill = false  // claimed again once the window is empty too (operations queued meanwhile)
                } else {
                    switch refillAhead() {
                    case .act(let action): return action
                    case .empty: (queueEmpty, fill) = (true, false)
                    case .ready: queueEmpty = false
                    }
                }
            }
            if fill, let next = claimed.last, !window.contains(where: { Self.sameItem($0.record, next.record) }) {
                claimed.removeLast()
                window.append(next)
                return .sendAlongside(next)
            }
        }
        return window.isEmpty ? finishing() : .awaitAlongside
    }

    private mutating func nextInBatches() -> Action {
        if takingBack != nil, let action = takeBack() { return action }
        guard batchLimit > 1, abort == nil else { return endBatches() }
        if outstanding.count > Self.batchesReady, let oldest = outstanding.first {
            // One batch at the server and enough ready: the oldest is answered first.
            return .awaitBatch(oldest)
        }
        let most = min(ramp, batchLimit)
        if writing == nil {
            if claimed.isEmpty {
                if !claimFoundNothing {
                    claimFoundNothing = true
                    return .claim(record: answered, after: last, limit: max(Self.claimSize, most))
                }
                claimFoundNothing = false
                // Nothing more to claim: the batches handed are answered (those of which nothing
                // was applied go again).
                guard let oldest = outstanding.first else { return endBatches() }
                return .awaitBatch(oldest)
            }
            claimFoundNothing = false
            writing = group(upTo: most)
        }
        guard let group = writing else { return endBatches() }
        if group.count > 1 { return .writeBatch(group) }
        writing = nil
        if let oldest = outstanding.first {
            // Alone, once the batches before it are answered (it waits with the unsent ones).
            claimed.append(contentsOf: group)
            return .awaitBatch(oldest)
        }
        return .send(group[0])
    }

    /// The next operations that go in one batch: consecutive, of one table, each with its item.
    private mutating func group(upTo most: Int) -> [ClaimedOperation]? {
        guard let next = claimed.popLast() else { return nil }
        var group = [next]
        while group.count < most, next.item != nil, let following = claimed.last, following.item != nil,
            following.record.table == next.record.table
        {
            group.append(following)
            claimed.removeLast()
        }
        return group
    }

    private mutating func endBatches() -> Action {
        stage = .drainingBatches
        return .endBatches
    }

    /// The push stopped or batches are no longer possible: the batches handed are answered and
    /// recorded; then the operations go one request each, when the server has no batches.
    private mutating func nextDraining() -> Action {
        if takingBack != nil, let action = takeBack() { return action }
        if let oldest = outstanding.first { return .awaitBatch(oldest) }
        stage = .singles
        if batchLimit > 1 { return finishing() }
        return parallelism > 1 ? nextSideBySide() : nextSerially()
    }

    /// While batches are taken back: the next one to await, or (all answered) the restart of the
    /// sender's turn with the batches of which nothing was applied in front of the unsent ones.
    private mutating func takeBack() -> Action? {
        if let oldest = outstanding.first { return .awaitBatch(oldest) }
        guard let back = takingBack else { return nil }
        takingBack = nil
        for group in back.reversed() { claimed.append(contentsOf: group.reversed()) }
        return .restartTurn
    }

    // MARK: claims

    private enum RefillStep {
        case act(Action)
        case ready
        case empty
    }

    /// A refill for operations sent one request each: the claim made ahead is taken when none
    /// are left; a claim is made now when still none are (none was made ahead, or it found the
    /// queue empty: the operations queued since then are sent too); and the next claim starts
    /// ahead, recording the answers so far.
    private mutating func refillAhead() -> RefillStep {
        if refill == .idle, claimed.isEmpty, aheadRecording != nil {
            refill = .tookAhead
            return .act(.takeAhead)
        }
        if refill == .tookAhead, abort != nil {
            refill = .idle
            return .empty
        }
        if refill != .claimed, claimed.isEmpty {
            refill = .claimed
            return .act(.claim(record: answered, after: last, limit: max(Self.claimSize, batchLimit)))
        }
        if refill == .claimed, claimed.isEmpty || abort != nil {
            refill = .idle
            return .empty
        }
        refill = .idle
        guard aheadRecording == nil else { return .ready }
        let recording = answered
        answered = []
        aheadRecording = recording
        return .act(.claimAhead(record: recording, after: last, limit: Self.claimSize))
    }

    /// The end: the claim made ahead is taken, then what is left is recorded and released.
    private mutating func finishing() -> Action {
        if aheadRecording != nil { return .takeAhead }
        stage = .done
        let (record, release) = (answered, claimed)
        (answered, claimed) = ([], [])
        return .finish(record: record, release: release)
    }

    /// Takes operations just claimed (in queue order) after those still claimed.
    private mutating func adopt(_ operations: [ClaimedOperation]) {
        guard let newest = operations.last else { return }
        last = newest.record.id
        claimed = operations.reversed() + claimed
    }

    /// Whether two operations are of one item (table names and ids compare without ASCII case).
    private static func sameItem(_ a: TableOperationRecord, _ b: TableOperationRecord) -> Bool {
        ItemID.key(a.itemId) == ItemID.key(b.itemId) && ASCIICase.fold(a.table) == ASCIICase.fold(b.table)
    }
}
