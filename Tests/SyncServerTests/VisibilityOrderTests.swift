import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Synchronization
import Testing

/// The interleaving that lost writes, forced: writer A is held just before it commits (holding
/// whatever its storage serialises writes with, and its stamp if it has one by then); writer B
/// is started and runs as far as the storage lets it — to its end, or until it waits for A; a
/// pull runs; A is released. When a storage stamped A before B but let B become visible first,
/// that pull moved the reader's token past A's stamp and A was never delivered. Here A must be
/// stamped above everything the reader had read, and the next pull must deliver it.
@Suite struct VisibilityOrderTests {
    @Test(arguments: StorageFactory.all)
    func aWriteHeldBeforeItsCommitIsStillDeliveredByTheNextPull(_ factory: StorageFactory) async throws {
        let script = WriteScript(holding: "a")
        try await Deployment.run(factory, observer: script) { deployment in
            let client = deployment.client
            for id in ["a", "b"] {
                try #require(
                    try await client.send(.post, deployment.server(0), "/tables/race", object: ["id": .string(id), "n": 0]).status == .created)
            }
            var reader = IncrementalReader(table: "race")
            try await reader.pull(client, from: deployment.server(0))
            #expect(reader.rows.count == 2)
            script.arm()

            // A, held before its commit.
            let writerA = Task { try await client.send(.patch, deployment.server(0), "/tables/race/a", object: ["n": 1]) }
            await script.waitUntilHeld()
            // B, through the other instance where there is one: it finishes, or waits for A.
            let writerB = Task { try await client.send(.patch, deployment.server(1), "/tables/race/b", object: ["n": 1]) }
            await script.waitUntilOtherWaitsOrFinishes()

            try await reader.pull(client, from: deployment.server(1))
            let tokenBeforeA = reader.token
            #expect(reader.rows["a"]?["n"] == 0, "A has not committed")

            script.release()
            let (a, b) = (try await writerA.value, try await writerB.value)
            #expect(a.status == .ok && b.status == .ok)
            let stampA = try #require(a.object[SystemProperty.updatedAt]?.stringValue)
            #expect(stampA > tokenBeforeA, "A became visible after the reader read up to \(tokenBeforeA): it is stamped above")
            if reader.rows["b"]?["n"] == 1 {
                #expect(stampA > (b.object[SystemProperty.updatedAt]?.stringValue ?? "~"), "B became visible first: A is stamped after B")
            }

            try await reader.pull(client, from: deployment.server(0))
            #expect(reader.rows["a"]?["n"] == 1, "the held write is delivered")
            #expect(reader.rows["b"]?["n"] == 1)
        }
    }

    @Test func aStampIsNowOrOneMillisecondAfterTheLast() {
        #expect(WriteStamp.next(after: nil, now: 1_000) == 1_000)
        #expect(WriteStamp.next(after: 999, now: 1_000) == 1_000)
        #expect(WriteStamp.next(after: 1_000, now: 1_000) == 1_001, "two writes in one millisecond")
        #expect(WriteStamp.next(after: 5_000, now: 1_000) == 5_001, "a clock behind the table's last stamp")
        #expect(WriteStamp.text(1_000) == "1970-01-01T00:00:01.000Z")
        let clock = StampClock()
        clock.start(at: 4_102_444_800_000, for: "t")  // 2100-01-01, ahead of any clock running this
        #expect(clock.next(for: "t") == "2100-01-01T00:00:00.001Z")
        #expect(clock.next(for: "t") == "2100-01-01T00:00:00.002Z")
        #expect(clock.next(for: "other") < "2100", "each table has its own last stamp")
    }
}

/// Observes the writes of a test: holds the write of one id at its last step before it commits,
/// until released, and reports when any other write waits for its turn or finishes.
final class WriteScript: WriteObserver {
    private struct State {
        var armed = false
        var isHeld = false
        var isReleased = false
        var otherReached = false
        var waiters: [(condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let holding: String
    private let state = Mutex(State())

    init(holding id: String) {
        holding = id
    }

    /// From now on, the write of the held id is held before it commits.
    func arm() { update { $0.armed = true } }

    func write(_ step: WriteStep, table: String, id: String) async {
        guard state.withLock({ $0.armed }) else { return }
        if id == holding, case .committing = step {
            update { $0.isHeld = true }
            await wait { $0.isReleased }
        } else if id != holding, step == .waiting || step == .finished {
            update { $0.otherReached = true }
        }
    }

    /// Returns once the write of the held id is held.
    func waitUntilHeld() async { await wait { $0.isHeld } }

    /// Returns once another write waits for its turn or has finished.
    func waitUntilOtherWaitsOrFinishes() async { await wait { $0.otherReached } }

    /// Lets the held write commit.
    func release() { update { $0.isReleased = true } }

    private func wait(until condition: @escaping @Sendable (State) -> Bool) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if condition(state) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            change(&state)
            let current = state
            let ready = state.waiters.filter { $0.condition(current) }.map(\.continuation)
            state.waiters.removeAll { $0.condition(current) }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
