import SyncStore
import SyncWire
import Testing

@testable import SyncClient

/// The push's state machine without a store or a server (``PushMachineHarness``): claims,
/// answers, conflicts, failures that stop the push, cancellation, and the three ways of sending.
@Suite struct PushMachineTests {
    typealias Harness = PushMachineHarness

    static func refusal(_ status: Int) -> PushMachine.Outcome {
        let code: SyncError.Code = status == 412 ? .preconditionFailed : status == 409 ? .conflict : .requestFailed
        return .failure(PushFailure(error: SyncError(code, reason: "refused", statusCode: status), item: [:], response: nil))
    }

    static let network = PushMachine.Outcome.abort(SyncError(.pushAbortedByNetwork, reason: "no network"))

    static func failed(_ answer: AnsweredOperation) -> Int? {
        guard case .failure(let failure) = answer.outcome else { return nil }
        return failure.statusCode
    }

    @Test func serialClaimsAheadWhileSendingAndRecordsWithTheNextClaim() {
        var push = Harness(operations: 3)
        push.run()
        #expect(push.trace == ["claim 0..", "ahead 3..", "send 1", "send 2", "send 3", "take ahead", "claim 3..", "finish"])
        #expect(Harness.ids(push.recorded) == [1, 2, 3])
        #expect(push.released.isEmpty && push.machine.abort == nil)
    }

    @Test func eachClaimAheadRecordsTheAnswersSoFar() {
        var push = Harness(operations: 70)
        push.run()
        let ahead = push.trace.filter { $0.hasPrefix("ahead") || $0.hasPrefix("claim") || $0 == "take ahead" }
        #expect(ahead == ["claim 0..", "ahead 64..", "take ahead", "ahead 70..", "take ahead", "claim 70.."])
        #expect(push.trace.filter { $0.hasPrefix("send") }.count == 70)
        #expect(Harness.ids(push.recorded) == Array(1...70), "every answer recorded once, in queue order")
    }

    @Test(arguments: [409, 412, 503])
    func aRefusedOperationIsRecordedAndThePushGoesOn(status: Int) {
        var push = Harness(operations: 3)
        push.answer = { $0.record.id == 2 ? Self.refusal(status) : .success(nil) }
        push.run()
        #expect(push.trace.filter { $0.hasPrefix("send") } == ["send 1", "send 2", "send 3"])
        #expect(Harness.ids(push.recorded) == [1, 2, 3])
        #expect(push.recorded.map(Self.failed) == [nil, status, nil])
        #expect(push.machine.abort == nil)
    }

    /// No network: the push stops; the operation whose answer never came is neither recorded nor
    /// released (it stays attempted, and the next push sends it again), the unsent ones go back.
    @Test func aTransientFailureStopsThePushAndLeavesTheRestForTheNext() {
        var push = Harness(operations: 4)
        push.answer = { $0.record.id == 2 ? Self.network : .success(nil) }
        push.run()
        #expect(push.trace == ["claim 0..", "ahead 4..", "send 1", "send 2", "take ahead", "finish"])
        #expect(Harness.ids(push.recorded) == [1])
        #expect(Harness.ids(push.released).sorted() == [3, 4])
        #expect(push.machine.abort?.code == .pushAbortedByNetwork)
        var retry = Harness(operations: 4)
        retry.queue.removeAll { $0.record.id == 1 }
        retry.run()
        #expect(retry.trace.filter { $0.hasPrefix("send") } == ["send 2", "send 3", "send 4"])
    }

    @Test func aCancelledRunStopsBeforeTheNextSend() {
        var push = Harness(operations: 3)
        push.cancelAt = 3
        push.run()
        #expect(push.trace == ["claim 0..", "ahead 3..", "send 1", "take ahead", "finish"])
        #expect(Harness.ids(push.recorded) == [1])
        #expect(Harness.ids(push.released).sorted() == [2, 3])
        #expect(push.machine.abort?.code == .pushCancelled)
    }

    @Test func aFailedClaimStopsThePush() {
        var push = Harness(operations: 3)
        push.failClaims = true
        push.run()
        #expect(push.trace == ["claim 0..", "finish"])
        #expect(push.machine.abort?.code == .pushAbortedByLocalStore)
    }

    /// A claim ahead that failed leaves its answers to be recorded at the end, before the later ones.
    @Test func theAnswersOfAFailedClaimAheadAreRecordedAtTheEnd() {
        var push = Harness(operations: 70)
        push.failAheadAt = 2
        push.run()
        #expect(push.machine.abort?.code == .pushAbortedByLocalStore)
        #expect(push.trace.suffix(2) == ["take ahead", "finish"])
        #expect(Harness.ids(push.recorded) == Array(1...70))
        #expect(push.released.isEmpty)
    }

    // MARK: parallel

    @Test func sideBySideAnswersAreRecordedInQueueOrder() {
        var push = Harness(operations: 5, parallelism: 2)
        push.pick = { $0.count - 1 }  // the newest in flight answers first
        push.run()
        #expect(
            push.trace == [
                "claim 0..", "ahead 5..", "send 1", "send 2", "answer 2", "answer 1", "send 3", "send 4", "answer 4", "answer 3",
                "send 5", "take ahead", "claim 5..", "answer 5", "claim 5..", "finish",
            ])
        #expect(Harness.ids(push.recorded) == [1, 2, 3, 4, 5])
    }

    @Test func anOperationWaitsWhileAnEarlierOneOfItsItemIsInFlight() {
        var push = Harness(operations: 3, parallelism: 4, itemIds: [1: "x", 2: "X", 3: "y"])
        push.run()
        let sends = push.trace.filter { $0.hasPrefix("send") || $0.hasPrefix("answer") }
        #expect(sends.prefix(3) == ["send 1", "answer 1", "send 2"], "x and X are one item")
        #expect(Harness.ids(push.recorded) == [1, 2, 3])
    }

    @Test func anAbortSideBySideStopsSendingAndTheAnswersInFlightAreRecorded() {
        var push = Harness(operations: 4, parallelism: 2)
        push.answer = { $0.record.id == 1 ? Self.network : .success(nil) }
        push.run()
        #expect(push.trace == ["claim 0..", "ahead 4..", "send 1", "send 2", "answer 1", "answer 2", "take ahead", "finish"])
        #expect(Harness.ids(push.recorded) == [2])
        #expect(Harness.ids(push.released).sorted() == [3, 4])
        #expect(push.machine.abort?.code == .pushAbortedByNetwork)
    }
}
