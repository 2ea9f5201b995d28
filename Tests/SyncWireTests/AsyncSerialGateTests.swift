import Dispatch
import SyncTestSupport
import Synchronization
import Testing

@testable import SyncWire

/// `AsyncSerialGate`: one turn at a time, in the order asked, cancellation while waiting, and
/// a turn that lasts until its body ends (returns, throws, or is cancelled). No sleeps: the test
/// holds a turn itself, or waits for the queue to reach a length. The time limit turns a lost
/// waiter into a failure instead of a hang.
// The limit is generous: in the full suite, tests that wait for child processes can hold the
// cooperative threads (two on a 2-core machine) for minutes, and these waiters must not fail then.
@Suite(.timeLimit(.minutes(10))) struct AsyncSerialGateTests {
    /// What the turns did, in order.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    struct Failure: Error, Equatable {}

    @Test func turnsComeInTheOrderTheyWereAskedFor() async throws {
        let gate = AsyncSerialGate(), log = Log()
        let tasks = try await gate.withTurn {
            var tasks: [Task<Void, any Error>] = []
            for index in 1...6 {
                tasks.append(Task { try await gate.withTurn { log.append("\(index)") } })
                await gate.waitUntilQueued(index)
            }
            #expect(log.all.isEmpty, "no turn starts while one is held")
            return tasks
        }
        for task in tasks { try await task.value }
        #expect(log.all == ["1", "2", "3", "4", "5", "6"])
        #expect(gate.queuedCount == 0)
    }

    @Test func oneBodyRunsAtATimeAcrossItsSuspensionPoints() async throws {
        final class Occupancy: Sendable {
            let counts = Mutex((inside: 0, most: 0, done: 0))
        }
        let gate = AsyncSerialGate(), occupancy = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await gate.withTurn {
                        occupancy.counts.withLock {
                            $0.inside += 1
                            $0.most = max($0.most, $0.inside)
                        }
                        for _ in 0..<3 { await Task.yield() }
                        occupancy.counts.withLock {
                            $0.inside -= 1
                            $0.done += 1
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = occupancy.counts.withLock { $0 }
        #expect(final.most == 1)
        #expect(final.done == 40)
        #expect(final.inside == 0)
    }

    @Test func aWaiterCancelledLeavesTheQueueAtOnceWithoutRunning() async throws {
        let gate = AsyncSerialGate(), log = Log()
        let later = try await gate.withTurn {
            let cancelled = Task { try await gate.withTurn { log.append("cancelled") } }
            await gate.waitUntilQueued(1)
            let later = Task { try await gate.withTurn { log.append("later") } }
            await gate.waitUntilQueued(2)
            cancelled.cancel()
            // Answered while the turn is still held here: it did not wait for it.
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            #expect(gate.queuedCount == 1)
            return later
        }
        try await later.value
        #expect(log.all == ["later"])
    }

    @Test func aTaskCancelledBeforeAskingNeverRunsItsBody() async throws {
        let gate = AsyncSerialGate(), log = Log()
        let free = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await gate.withTurn { log.append("free gate") }
        }
        await #expect(throws: CancellationError.self) { try await free.value }
        try await gate.withTurn {
            let busy = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await gate.withTurn { log.append("busy gate") }
            }
            await #expect(throws: CancellationError.self) { try await busy.value }
            #expect(gate.queuedCount == 0)
        }
        #expect(log.all.isEmpty)
        // The gate is free again: a turn starts at once.
        #expect(try await gate.withTurn { 42 } == 42)
    }

    @Test func aCancelledHolderKeepsItsTurnUntilItsBodyEnds() async throws {
        let gate = AsyncSerialGate(), log = Log()
        let entered = AsyncGate(), release = AsyncGate()
        let holder = Task {
            try await gate.withTurn {
                entered.open()
                await release.wait()  // a wait that does not end on cancellation
                log.append("holder ends, cancelled: \(Task.isCancelled)")
            }
        }
        await entered.wait()
        let next = Task { try await gate.withTurn { log.append("next") } }
        await gate.waitUntilQueued(1)
        holder.cancel()
        #expect(gate.queuedCount == 1, "the next task still waits")
        #expect(log.all.isEmpty)
        release.open()
        try await holder.value
        try await next.value
        #expect(log.all == ["holder ends, cancelled: true", "next"])
    }

    @Test func aThrowingBodyPassesItsErrorOnAndTheTurnToTheNext() async throws {
        let gate = AsyncSerialGate(), log = Log()
        let (failing, next) = try await gate.withTurn {
            let failing = Task {
                try await gate.withTurn {
                    log.append("failing")
                    throw Failure()
                }
            }
            await gate.waitUntilQueued(1)
            let next = Task { try await gate.withTurn { log.append("next") } }
            await gate.waitUntilQueued(2)
            return (failing, next)
        }
        await #expect(throws: Failure.self) { try await failing.value }
        try await next.value
        #expect(log.all == ["failing", "next"])

        await #expect(throws: Failure.self) { try await gate.withTurn { throw Failure() } }
        #expect(try await gate.withTurn { "free" } == "free")
        #expect(gate.queuedCount == 0)
    }

    @Test func aBodyOnAnActorRunsOnThatActor() async throws {
        actor Counter {
            let gate = AsyncSerialGate()
            var value = 0
            func add(_ n: Int) async throws -> Int {
                try await gate.withTurn {
                    let before = value
                    await Task.yield()
                    value = before + n  // no other turn changed `value` across the yield
                    return value
                }
            }
        }
        let counter = Counter()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 1...20 { group.addTask { try await counter.add(n) } }
            try await group.waitForAll()
        }
        #expect(await counter.value == 210)
    }

    /// An actor on an executor of its own, so that a body can tell without trapping whether it
    /// really runs on the actor (`#isolation` only names the actor the caller passed along).
    actor Owner {
        final class QueueExecutor: SerialExecutor {
            let queue = DispatchQueue(label: "AsyncSerialGateTests.Owner")
            static let key = DispatchSpecificKey<Bool>()
            init() { queue.setSpecific(key: Self.key, value: true) }
            func enqueue(_ job: consuming ExecutorJob) {
                let job = UnownedJob(job)
                queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
            }
        }
        let executor = QueueExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        let gate = AsyncSerialGate()

        /// Whether the current thread runs the actor's jobs (reads no state of the actor).
        nonisolated static func onTheActor() -> Bool { DispatchQueue.getSpecific(key: QueueExecutor.key) ?? false }

        /// Whether a body that captures nothing of the actor ran on it, sync and async.
        func bodyRanOnTheActor(suspending: Bool) async throws -> Bool {
            if suspending {
                return try await gate.withTurn {
                    await Task.yield()
                    return Owner.onTheActor()
                }
            }
            return try await gate.withTurn { Owner.onTheActor() }
        }
    }

    @Test func aBodyThatTouchesNothingOfTheActorStillRunsOnIt() async throws {
        let owner = Owner()
        for suspending in [false, true] {
            let onTheActor = try await owner.bodyRanOnTheActor(suspending: suspending)
            #expect(onTheActor, "suspending: \(suspending)")
        }
    }

    @Test func aBodyThatWaitedForItsTurnRunsOnTheActor() async throws {
        // The caller suspends in the queue and is resumed by the turn before it, from another
        // task: its body must still run on the actor, not where the resumption came from.
        let owner = Owner()
        let entered = AsyncGate(), release = AsyncGate()
        let holder = Task {
            try await owner.gate.withTurn {
                entered.open()
                await release.wait()
            }
        }
        await entered.wait()
        let waiters = (0..<4).map { _ in Task { try await owner.bodyRanOnTheActor(suspending: false) } }
        await owner.gate.waitUntilQueued(waiters.count)
        release.open()
        try await holder.value
        for waiter in waiters {
            let onTheActor = try await waiter.value
            #expect(onTheActor)
        }
    }
}
