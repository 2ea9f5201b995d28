import SyncStore
import SyncWire
import Testing

@testable import SyncClient

/// The push's state machine sending batches (the batch extension), without a store or a server.
@Suite struct PushMachineBatchTests {
    typealias Harness = PushMachineHarness

    static func answered(_ group: [ClaimedOperation]) -> PushMachine.Landing {
        .answered(group.map { _ in .success(nil) })
    }

    @Test func batchesArePipelinedWithTwoReadyBesideTheOneAtTheServer() {
        var push = Harness(operations: 10, batchLimit: 4)
        push.run()
        #expect(
            push.trace == [
                "claim 0..", "batch 1-4", "batch 5-8", "batch 9-10", "land 1-4", "claim 10..", "land 5-8", "claim 10..", "land 9-10",
                "claim 10..", "end batches", "finish",
            ])
        #expect(Harness.ids(push.recorded) == Array(1...10))
    }

    @Test func aBatchHoldsConsecutiveOperationsOfOneTable() {
        var push = Harness(operations: 5, batchLimit: 10, tables: [3: "other"])
        push.run()
        #expect(push.trace.filter { $0.hasPrefix("batch") || $0.hasPrefix("send") } == ["batch 1-2", "send 3", "batch 4-5"])
    }

    /// A batch's results are taken one by one: a refusal of one operation is recorded as its
    /// error, the others as successes.
    @Test func aBatchsPartialResultsAreRecordedPerOperation() {
        var push = Harness(operations: 4, batchLimit: 4)
        let refusals: [Int64: Int] = [2: 409, 3: 412]
        push.land = { group, _ in .answered(group.map { refusals[$0.record.id].map(PushMachineTests.refusal) ?? .success(nil) }) }
        push.run()
        #expect(Harness.ids(push.recorded) == [1, 2, 3, 4])
        #expect(push.recorded.map(PushMachineTests.failed) == [nil, 409, 412, nil])
        #expect(push.machine.abort == nil)
    }

    /// An operation without its item cannot go in a batch: it goes alone once the batches before
    /// it are answered.
    @Test func anOperationThatCannotBeBatchedWaitsForTheBatchesBeforeIt() {
        var push = Harness(operations: 5, batchLimit: 4, itemless: [3])
        push.run()
        #expect(push.trace.prefix(5) == ["claim 0..", "batch 1-2", "land 1-2", "send 3", "batch 4-5"])
        #expect(Harness.ids(push.recorded) == Array(1...5))
    }

    /// 413: nothing of the batch was applied; the batches handed after it are not sent (their
    /// turn ended) and come back with it, in queue order; the rest goes in batches half as large.
    @Test func aBatchTooLargeComesBackWithTheLaterOnesAndTheLimitIsHalved() {
        var push = Harness(operations: 10, batchLimit: 4)
        push.land = { group, restarted in
            if restarted { return Self.answered(group) }
            return group.first?.record.id == 1 ? .tooLarge : .notSent
        }
        push.run()
        #expect(
            Array(push.trace.prefix(16)) == [
                "claim 0..", "batch 1-4", "batch 5-8", "batch 9-10", "land 1-4", "land 5-8", "land 9-10", "restart turn", "batch 1-2",
                "batch 3-4", "batch 5-6", "land 1-2", "batch 7-8", "land 3-4", "batch 9-10", "land 5-6",
            ])
        #expect(Harness.ids(push.recorded) == Array(1...10))
        #expect(push.machine.batchLimit == 2)
    }

    /// A server without the batch route: the push goes on one request per operation.
    @Test func aServerWithoutBatchesTurnsThePushToSingleRequests() {
        var push = Harness(operations: 6, batchLimit: 4)
        push.land = { group, _ in group.first?.record.id == 1 ? .unsupported : .notSent }
        push.run()
        #expect(
            push.trace == [
                "claim 0..", "batch 1-4", "batch 5-6", "claim 6..", "land 1-4", "land 5-6", "restart turn", "end batches", "ahead 6..",
                "send 1",
                "send 2", "send 3", "send 4", "send 5", "send 6", "take ahead", "claim 6..", "finish",
            ])
        #expect(Harness.ids(push.recorded) == Array(1...6))
        #expect(push.machine.batchLimit == 1)
    }

    @Test func aBodyLargerThanTheServerTakesIsCutInHalves() {
        var push = Harness(operations: 8, batchLimit: 8)
        push.oversized = { $0.count > 2 }
        push.run()
        #expect(push.trace.prefix(4) == ["claim 0..", "too big 1-8", "too big 1-4", "batch 1-2"])
        #expect(Harness.ids(push.recorded) == Array(1...8))
    }

    /// An answer that stops the push inside a batch's results: the other results of that batch
    /// and the batches the sender sent after it are still taken and recorded before the push ends.
    @Test func anAbortInABatchStopsTheBatchesAndTheOnesSentAreStillRecorded() {
        var push = Harness(operations: 10, batchLimit: 4)
        push.land = { group, _ in
            guard group.first?.record.id == 1 else { return Self.answered(group) }
            return .answered(group.map { $0.record.id == 2 ? PushMachineTests.network : .success(nil) })
        }
        push.run()
        #expect(
            push.trace == [
                "claim 0..", "batch 1-4", "batch 5-8", "batch 9-10", "land 1-4", "end batches", "land 5-8", "land 9-10", "finish",
            ])
        #expect(Harness.ids(push.recorded) == [1, 3, 4] + Array(5...10))
        #expect(push.released.isEmpty)
        #expect(push.machine.abort?.code == .pushAbortedByNetwork)
    }

    /// A batch refused as a whole (a 401): its operations stay attempted (the next push settles
    /// them); the batches handed after it were not sent, and go back.
    @Test func aRefusedBatchStopsThePushAndTheBatchesNotSentAreReleased() {
        var push = Harness(operations: 10, batchLimit: 4)
        push.land = { group, _ in group.first?.record.id == 1 ? .answered([.abort(SyncError.pushRefusedSignIn)]) : .notSent }
        push.run()
        #expect(
            push.trace == [
                "claim 0..", "batch 1-4", "batch 5-8", "batch 9-10", "land 1-4", "end batches", "land 5-8", "land 9-10", "restart turn",
                "finish",
            ])
        #expect(push.recorded.isEmpty)
        #expect(Harness.ids(push.released).sorted() == Array(5...10))
        #expect(push.machine.abort?.code == .pushAbortedByAuthentication)
    }

    @Test func aCancelledRunLandsTheBatchesHandedAndReleasesTheRest() {
        var push = Harness(operations: 300, batchLimit: 100)
        push.cancelAt = 3
        push.run()
        #expect(push.trace == ["claim 0..", "batch 1-100", "claim 100..", "end batches", "land 1-100", "finish"])
        #expect(Harness.ids(push.recorded) == Array(1...100))
        #expect(Harness.ids(push.released).sorted() == Array(101...200), "claimed and never sent")
        #expect(push.machine.abort?.code == .pushCancelled)
    }
}
