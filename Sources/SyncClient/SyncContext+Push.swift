import Foundation
import Logging
import SyncStore
import SyncWire

extension SyncContext {
    /// Pushes every pending operation to the server, one request per operation, in queue order
    /// across all tables (docs/protocol.md §1.4); see ``setPushBatching(_:)`` and
    /// ``setPushParallelism(_:)`` for the two ways of sending more at once.
    ///
    /// A successful insert or update stores the server's answer locally (its version, timestamps)
    /// and removes the operation. A failed operation is recorded as a ``TableOperationError``
    /// (409/412 with the server's item), stays queued, and the push goes on with the next one.
    /// Network failures, a 401, a local store failure and cancellation stop the push at once;
    /// the current operation stays queued and no error is recorded for it.
    ///
    /// Once the queue is sent, the push uploads the content of the attachments whose item's and
    /// metadata row's inserts reached the server (``transferAttachments()`` describes how); an
    /// upload that fails for now waits in the attachment queue for the next push. After a push
    /// that completed with operation errors the uploads run too, and the push throws
    /// ``SyncError/pushCompletedWithErrors``: an upload refused then is parked in the queue with
    /// its `lastError` (``attachmentTransfers()``).
    ///
    /// - Throws: ``SyncError/attachmentTransferFailed`` when the server refused uploads for good
    ///   (``SyncError/authenticationRequired`` when it answered an upload 401);
    ///   ``SyncError/pushCompletedWithErrors`` with ``SyncError/operationErrors`` when
    ///   operations failed (after the conflict handler's ``SyncConflictHandler/pushDidComplete(with:)``
    ///   had its chance to resolve them); ``SyncError/pushAbortedByNetwork``,
    ///   ``SyncError/pushAbortedByAuthentication``, ``SyncError/pushAbortedByLocalStore`` or
    ///   ``SyncError/pushCancelled`` when it stopped early (with the errors recorded so far), or
    ///   when its task was cancelled while it waited for a running push, pull or purge (then
    ///   nothing was read or sent); ``SyncError/invalidSetting`` when the client's installation
    ///   id cannot be sent in a header (a control character: nothing is read or sent).
    public func push() async throws {
        try await exclusive(cancelled: SyncError.pushWasCancelled()) { run in
            try await runPushAndUploads(run, refusalsThrow: true)
        }
    }

    /// The push itself, for callers that already run exclusively (pull's implicit push).
    ///
    /// The store is written once per ``PushMachine/claimSize`` operations, not twice per operation: one
    /// transaction records the answers of the operations sent since the last one and claims the
    /// next operations, marking each attempted before any of them is sent (an operation is in
    /// flight from its claim: the in-flight rule covers it). A crash leaves the answered but
    /// unrecorded operations attempted, and the next push settles them. Operations claimed and
    /// never sent (the push stopped first) go back to the state they had.
    ///
    /// With ``HTTPSyncTransport`` on Linux the push runs on the event loop of its connection
    /// (``ServiceConnection/runExecutor``): each request is written, answered and its task resumed
    /// on one thread.
    func runPush(_ run: RunHandle) async throws {
        try connection.checkInstallationID()
        try await run.preferring(connection.runExecutor) { try await pushQueue(run) }
    }

    /// The push's loop: asks its ``PushMachine`` what to do, does it (a store transaction, a
    /// request, waiting for an answer) and reports back what came of it.
    private func pushQueue(_ run: RunHandle) async throws {
        let total = try await read { try $0.operationCount(table: nil) }
        emit(.pushStarted(operations: total))
        logger.debug("Push started", metadata: ["operations": "\(total)"])
        await (store as? any PushCacheHints)?.willPush(operations: total)
        var machine: PushMachine
        do {
            machine = PushMachine(batchLimit: try await batchLimit(run: run), parallelism: pushParallelism)
        } catch {
            machine = PushMachine(batchLimit: 1, parallelism: pushParallelism, abort: Self.requestAbort(error))
        }
        var tally = PushTally()
        let (handed, hand) = AsyncStream.makeStream(of: HandedBatch.self)
        let (replies, reply) = AsyncStream.makeStream(of: BatchReply.self)
        var pipeline = BatchPipeline(replies: replies.makeAsyncIterator(), turn: BatchTurn())
        let (turn, connection) = (pipeline.turn, self.connection)
        await withTaskGroup(of: SentAlongside?.self) { tasks in
            if machine.batchLimit > 1 {
                tasks.addTask {
                    await self.sendInTurn(handed, replies: reply, turn: turn, run: run)
                    return nil
                }
            }
            var ahead: Task<[ClaimedOperation], any Error>?
            steps: while true {
                switch machine.next(cancelled: run.isCancelled) {
                case .claim(let record, let after, let limit):
                    do {
                        let claimed = try await recordAndClaim(record, after: after, limit: limit)
                        report(record, into: &tally)
                        machine.claimed(claimed)
                    } catch {
                        machine.storeFailed(Self.storeAbort(error))
                    }
                case .claimAhead(let record, let after, let limit):
                    ahead = Task { try await self.recordAndClaim(record, after: after, limit: limit) }
                case .takeAhead:
                    do {
                        let claimed = try await ahead?.value ?? []
                        report(machine.aheadClaimed(claimed), into: &tally)
                    } catch {
                        machine.aheadFailed(Self.storeAbort(error))
                    }
                    ahead = nil
                case .send(let next):
                    checkpoint?(.pushClaimed)
                    let outcome = await pushOne(next, connection: connection, run: run)
                    checkpoint?(.pushSent)
                    machine.answered(outcome, of: next)
                case .sendAlongside(let next):
                    checkpoint?(.pushClaimed)
                    tasks.addTask { SentAlongside(id: next.record.id, outcome: await self.pushOne(next, connection: connection, run: run)) }
                case .awaitAlongside:
                    while let result = await tasks.next() {
                        guard let answer = result else { continue }  // the batch sender ended
                        for _ in 0..<machine.answeredAlongside(answer.id, outcome: answer.outcome) { checkpoint?(.pushSent) }
                        break
                    }
                case .writeBatch(let group):
                    do {
                        let request = try batchRequest(group)
                        // A body larger than the server said it takes is cut in halves before it
                        // is sent, down to one operation.
                        if let most = advertisedBatchBytes, let body = request.body, body.count > most {
                            machine.batchOversized()
                            continue steps
                        }
                        for _ in group { checkpoint?(.pushClaimed) }
                        hand.yield(HandedBatch(request: request, turn: turn.current))
                        machine.batchHanded()
                    } catch {
                        machine.batchUnwritable(Self.requestAbort(error))
                    }
                case .awaitBatch(let oldest):
                    let landing: PushMachine.Landing
                    switch await pipeline.nextReply() {
                    case .notSent: landing = .notSent
                    case .sent(let answer): landing = await batchOutcome(oldest, reply: answer, run: run)
                    }
                    for _ in machine.batchLanded(landing) { checkpoint?(.pushSent) }
                case .restartTurn:
                    pipeline.endTurn()
                case .endBatches:
                    pipeline.endTurn()
                    hand.finish()
                case .finish(let record, let release):
                    guard !record.isEmpty || !release.isEmpty else { break steps }
                    do {
                        try await write { writer in
                            try PushSteps.record(record, in: writer)
                            try PushSteps.release(release, in: writer)
                        }
                        report(record, into: &tally)
                    } catch {
                        machine.storeFailed(Self.storeAbort(error))
                    }
                    break steps
                }
            }
            hand.finish()
        }
        await (store as? any PushCacheHints)?.didPush()
        emit(.pushFinished(succeeded: tally.succeeded, failed: tally.failed))
        logger.debug("Push finished", metadata: ["succeeded": "\(tally.succeeded)", "failed": "\(tally.failed)"])
        try await finishPush(abort: machine.abort)
    }

    /// Sends the batches handed to it one after the other, each once the one before it is
    /// answered (a task of its own, while the push goes on). A batch of a turn that ended (an
    /// earlier batch of its turn answered other than 200, or the push withdrew it) or of a
    /// cancelled push is not sent.
    private nonisolated func sendInTurn(
        _ handed: AsyncStream<HandedBatch>, replies: AsyncStream<BatchReply>.Continuation, turn: BatchTurn, run: RunHandle
    ) async {
        var refusedTurn: Int?
        for await batch in handed {
            guard batch.turn != refusedTurn, batch.turn == turn.current, !run.isCancelled else {
                replies.yield(.notSent)
                continue
            }
            let answer: Result<SyncResponse, any Error>
            do {
                answer = .success(try await connection.send(batch.request, run: run))
            } catch {
                answer = .failure(error)
            }
            if case .success(let response) = answer, response.statusCode == 200 {} else { refusedTurn = batch.turn }
            replies.yield(.sent(answer))
        }
        replies.finish()
    }

    /// Records the answers `settled` and claims up to `limit` operations after the operation
    /// `after`, in one store transaction.
    private func recordAndClaim(_ settled: [AnsweredOperation], after: Int64, limit: Int) async throws -> [ClaimedOperation] {
        try await write { writer in
            try PushSteps.record(settled, in: writer)
            return try PushSteps.claim(after: after, limit: limit, in: writer)
        }
    }

    /// Counts and announces recorded answers.
    private func report(_ answered: [AnsweredOperation], into tally: inout PushTally) {
        for answer in answered {
            let succeeded: Bool
            if case .success = answer.outcome { succeeded = true } else { succeeded = false }
            if succeeded { tally.succeeded += 1 } else { tally.failed += 1 }
            let sent = answer.sent
            emit(.operationPushed(table: sent.table, itemId: sent.itemId, kind: sent.kind, succeeded: succeeded))
        }
    }

    /// Reports the stored operation errors: attached to the abort error, or after the handler's
    /// end-of-push hook as ``SyncError/pushCompletedWithErrors``.
    private func finishPush(abort: SyncError?) async throws {
        let records: [OperationErrorRecord]
        do {
            records = try await read { try $0.operationErrors() }
        } catch {
            throw abort ?? Self.storeAbort(error)
        }
        var errors = records.map { TableOperationError($0, context: self) }
        if let abort { throw abort.with(operationErrors: errors) }
        guard !errors.isEmpty else { return }
        if let conflictHandler {
            await Self.offTheLoop { await conflictHandler.pushDidComplete(with: errors) }
            do {
                errors = try await read { try $0.operationErrors() }.map { TableOperationError($0, context: self) }
            } catch {
                throw Self.storeAbort(error)
            }
            if errors.isEmpty { return }
        }
        throw SyncError(.pushCompletedWithErrors, reason: "Not all operations completed successfully.", operationErrors: errors)
    }

    /// How one sent operation ended, before it is recorded.
    typealias Outcome = PushMachine.Outcome

    /// Operations pushed and recorded so far.
    struct PushTally {
        var succeeded = 0
        var failed = 0
    }

    /// The outcome of an operation sent side by side, with its id.
    struct SentAlongside: Sendable {
        let id: Int64
        let outcome: Outcome
    }

    /// Sends one operation through the conflict handler (or directly) and classifies the result.
    /// With `answer` (the operation's result in a batch), its first send is that answer.
    func pushOne(_ claimed: ClaimedOperation, connection: ServiceConnection, run: RunHandle, answer: BatchAnswer? = nil) async -> Outcome {
        let record = claimed.record
        guard let item = claimed.item else {
            let missing = SyncError(.invalidItem, reason: "The item is missing from the local table.")
            return .failure(PushFailure(error: missing, item: [SystemProperty.id: .string(record.itemId)], response: nil))
        }
        let operation = PushOperation(
            operation: TableOperation(record), item: item, mayHaveReachedServer: claimed.mayHaveReachedServer, connection: connection,
            run: run, answer: answer)
        do {
            let result: JSONObject?
            if let conflictHandler {
                result = try await Self.offTheLoop { try await conflictHandler.execute(operation) }
            } else {
                result = try await operation.execute()
            }
            if operation.isPushCancelled { return .abort(SyncError.pushWasCancelled()) }
            return .success(result)
        } catch {
            if operation.isPushCancelled || run.isCancelled || error is CancellationError {
                return .abort(SyncError.pushWasCancelled(error))
            }
            if let abort = Self.pushAbort(for: error) { return .abort(abort) }
            return .failure(PushFailure(error: error, item: operation.item, response: operation.lastResponse))
        }
    }

    /// Runs the app's conflict handler on Swift's global pool, not on the event loop the push
    /// prefers (``runPush(_:)``): a handler may compute or block for a while, and an event loop
    /// that waits for it serves none of its connections meanwhile. The requests the handler sends
    /// through ``PushOperation/execute()`` still prefer the loop of their connection.
    static func offTheLoop<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await withTaskExecutorPreference(globalConcurrentExecutor, operation: body)
    }

    /// The abort an error stops the whole push with (no network, a 401, a cancellation, the local
    /// store), or `nil` for an error of the operation alone.
    static func pushAbort(for error: any Error) -> SyncError? {
        if error is CancellationError { return SyncError.pushWasCancelled(error) }
        guard let error = error as? SyncError else { return nil }
        switch error.code {
        case .transportFailed:
            return SyncError(.pushAbortedByNetwork, reason: "The server could not be reached.", underlying: error)
        case .authenticationRequired:
            return SyncError.pushRefusedSignIn
        case .cancelled, .pushCancelled:
            return SyncError.pushWasCancelled(error)
        case .localStoreFailed:
            return storeAbort(error)
        default:
            return nil
        }
    }

    /// The abort for a request of the push's own (not an operation's) that got no usable answer.
    static func requestAbort(_ error: any Error) -> SyncError {
        pushAbort(for: error) ?? SyncError(.pushAbortedByNetwork, reason: "The server's answer could not be used.", underlying: error)
    }

    static func storeAbort(_ error: any Error) -> SyncError {
        if let error = error as? SyncError, error.isPushAbort { return error }
        return SyncError(.pushAbortedByLocalStore, reason: "The local store failed during the push.", underlying: error)
    }
}

/// An operation claimed by a push: the queue record and the item to send.
struct ClaimedOperation: Sendable {
    let record: TableOperationRecord
    /// The current row (insert, update) or the item kept with a delete; `nil` when the row of an
    /// insert or update is missing.
    let item: JSONObject?
    /// The state the operation had before the claim (attempted: an earlier attempt was sent
    /// and no outcome recorded since, so it may have been applied).
    let previousState: TableOperationRecord.State

    /// Whether an earlier attempt may have been applied.
    var mayHaveReachedServer: Bool { previousState == .attempted }
}

/// A sent operation and its answer, to be recorded.
struct AnsweredOperation: Sendable {
    enum Outcome: Sendable {
        /// The server accepted it: its item (or `nil`).
        case success(JSONObject?)
        /// It failed: what to record.
        case failure(PushFailure)
    }

    /// The operation as it was claimed and sent.
    let sent: TableOperationRecord
    let outcome: Outcome
}

/// Why one pushed operation failed: what to record in the errors table.
struct PushFailure: Sendable {
    let error: any Error
    let item: JSONObject
    let response: SyncResponse?

    var statusCode: Int? { (error as? SyncError)?.statusCode ?? response?.statusCode }
    var serverItem: JSONObject? { (error as? SyncError)?.serverItem }
    var conflict: TableOperationError.Conflict? { (error as? SyncError)?.conflict }
    var message: String {
        guard let error = error as? SyncError else { return "The conflict handler failed the operation." }
        return error.reason ?? "The operation failed (\(error.code.rawValue))."
    }
}
