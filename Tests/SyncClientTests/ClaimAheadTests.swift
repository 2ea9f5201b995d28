import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncClient

/// A push that sends one operation at a time (or a few side by side) claims the next operations
/// in the background while it sends those claimed before: the requests do not wait for the
/// store between two claims, and a claim that fails loses no answer.
@Suite(.timeLimit(.minutes(2))) struct ClaimAheadTests {
    /// More operations than one claim takes.
    static let count = PushMachine.claimSize + 6

    static func insertAll(_ f: ClientFixture) async throws -> [String] {
        let ids = (0..<count).map { String(format: "i%03d", $0) }
        for id in ids { try await f.table().insert(todo(id, "text \(id)")) }
        return ids
    }

    @Test(arguments: StoreKind.allCases, [1, 3])
    func theNextClaimBeginsWhileTheClaimedOperationsAreSent(kind: StoreKind, parallelism: Int) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy)
            try await f.context.setPushParallelism(parallelism)
            let ids = try await Self.insertAll(f)
            // The second request is answered only once the push's second store transaction (the
            // next claim) has begun: a push that claimed again only when the operations of its
            // first claim were all sent would wait here until the time limit.
            let first = spy.transactions.writes + 1
            let secondClaim = AsyncGate()
            spy.beforeEachWrite { number in
                if number == first + 1 { secondClaim.open() }
            }
            for index in 0..<Self.count {
                f.transport.enqueue { request in
                    if index == 1 { await secondClaim.wait() }
                    return try ParallelPushTests.echo(request)
                }
            }
            try await f.context.push()
            #expect(Set(f.transport.requests.compactMap(ParallelPushTests.itemId)) == Set(ids))
            #expect(try await f.operations().isEmpty)
            #expect(try await f.rows().map { $0["version"] } == ids.map { _ in "v1" })
        }
    }

    @Test(arguments: StoreKind.allCases, [1, 3])
    func anOperationQueuedAfterTheLastClaimAheadIsStillSent(kind: StoreKind, parallelism: Int) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy)
            try await f.context.setPushParallelism(parallelism)
            try await f.table().insert(todo("a", "first"))
            // The claim ahead (the push's second transaction) finds the queue empty; b is queued
            // after it, while a is in flight: the push claims once more before it ends.
            let first = spy.transactions.writes + 1
            let aheadDone = AsyncGate()
            spy.afterEachWrite { number in
                if number == first + 1 { aheadDone.open() }
            }
            f.transport.enqueue { request in
                await aheadDone.wait()
                try await f.table().insert(todo("b", "queued during the push"))
                return try ParallelPushTests.echo(request)
            }
            f.transport.enqueue(ParallelPushTests.echo)
            try await f.context.push()
            #expect(f.transport.requests.compactMap(ParallelPushTests.itemId) == ["a", "b"])
            #expect(try await f.operations().isEmpty)
            #expect(try await f.rows().map { $0["version"] } == ["v1", "v1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedClaimStopsThePushAndEveryAnswerIsRecorded(kind: StoreKind) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy)
            let ids = try await Self.insertAll(f)
            let first = spy.transactions.writes + 1
            spy.beforeEachWrite { number in
                if number == first + 1 { throw FaultyStore.InjectedFailure() }
            }
            for _ in 0..<Self.count { f.transport.enqueue(ParallelPushTests.echo) }
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByLocalStore)
            // The operations of the first claim were sent and their answers recorded at the end;
            // the failed claim claimed nothing, so the rest wait as they were.
            let sent = PushMachine.claimSize
            #expect(f.transport.requests.compactMap(ParallelPushTests.itemId) == Array(ids.prefix(sent)))
            let left = try await f.operations()
            #expect(left.map(\.itemId) == Array(ids.dropFirst(sent)))
            #expect(left.allSatisfy { $0.state == .pending })
            #expect(try await f.rows().map { $0["version"] } == ids.map { id -> JSONValue? in id < ids[sent] ? "v1" : .null })
        }
    }
}
