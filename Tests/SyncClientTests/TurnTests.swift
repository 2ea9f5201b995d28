import Foundation
import SyncStore
import SyncTestSupport
import Testing

@testable import SyncClient
@testable import SyncWire

/// Push, pull and purge take turns: one waits while another runs, in call order, and one whose
/// task is cancelled while it waits ends at once, reading and sending nothing.
// The limit is generous: in the full suite, tests that wait for child processes can hold the
// cooperative threads (two on a 2-core machine) for minutes, and these waiters must not fail then.
@Suite(.timeLimit(.minutes(10))) struct TurnTests {
    enum Job: String, CaseIterable, Sendable {
        case push, pull, purge

        func run(on table: SyncTable) async throws {
            switch self {
            case .push: try await table.context.push()
            case .pull: try await table.pull(queryId: "q")
            case .purge: try await table.purge(force: true)
            }
        }

        var cancelled: SyncError {
            switch self {
            case .push: return .pushCancelled
            case .pull: return .pullCancelled
            case .purge: return .purgeCancelled
            }
        }
    }

    /// Queues an insert and starts a push whose request waits for `release`; returns once the
    /// request is on the wire (the push holds the turn).
    static func startHeldPush(_ f: ClientFixture, release: AsyncGate) async throws -> Task<Void, any Error> {
        try await f.table().insert(todo("a", "1"))
        f.transport.enqueue { request in
            await release.wait()
            var item = request.jsonObject ?? [:]
            item["version"] = "1"
            return SyncResponse(statusCode: 201, body: try JSONCoding.encode(item))
        }
        let push = Task { [context = f.context] in try await context.push() }
        await f.transport.waitForRequests(1)
        return push
    }

    @Test(arguments: StoreKind.allCases, Job.allCases)
    func aJobCancelledWhileWaitingItsTurnEndsWithoutTouchingTheStore(kind: StoreKind, job: Job) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy), release = AsyncGate(), table = try f.table()
            let running = try await Self.startHeldPush(f, release: release)
            let waiting = Task { try await job.run(on: table) }
            await f.context.gate.waitUntilQueued(1)
            let before = spy.transactions
            waiting.cancel()
            // It ends while the push still holds the turn: it did not wait for it.
            await #expect(throws: job.cancelled) { try await waiting.value }
            #expect(spy.transactions == before, "the cancelled \(job) read and wrote nothing")
            #expect(f.context.gate.queuedCount == 0)
            release.open()
            try await running.value
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo"])
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("a")?["version"] == "1", "the purge did not run")
            #expect(try await f.config("deltaToken|todo|q") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func waitingJobsRunAfterTheRunningOneInCallOrder(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let release = AsyncGate(), table = try f.table()
            let running = try await Self.startHeldPush(f, release: release)
            let pull = Task { try await table.pull(queryId: "q") }
            await f.context.gate.waitUntilQueued(1)
            let purge = Task { try await table.purge() }
            await f.context.gate.waitUntilQueued(2)
            #expect(f.transport.requests.count == 1, "the pull waits for the push")
            f.transport.enqueuePage([serverItem("b", "pulled", updatedAt: "2001-01-02T00:00:00.000Z")])
            f.transport.enqueuePage([])
            release.open()
            try await running.value
            #expect(try await pull.value == 1)
            try await purge.value
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo", "GET /app/tables/todo", "GET /app/tables/todo"])
            // The purge came last: it removed the pushed row and the pulled one.
            #expect(try await f.rows().isEmpty)
            #expect(try await f.config("deltaToken|todo|q") != nil)
        }
    }
}
