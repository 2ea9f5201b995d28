import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// Pushes with several operations of different items in flight at once
/// (``SyncContext/setPushParallelism(_:)``): a window that slides along the queue in order,
/// every answer recorded as a single request's, an abort among the requests in flight, and the
/// setting's range.
///
/// Scripted answers wait until enough requests have arrived, so a push that sent fewer at once
/// than it should would never get an answer: the suite's time limit fails it.
@Suite(.timeLimit(.minutes(2))) struct ParallelPushTests {
    /// Counts the requests being answered at once.
    final class InFlight: Sendable {
        private let state = Mutex((now: 0, most: 0))
        var most: Int { state.withLock { $0.most } }

        func during<T>(_ body: () async throws -> T) async rethrows -> T {
            state.withLock { state in
                state.now += 1
                state.most = max(state.most, state.now)
            }
            defer { state.withLock { $0.now -= 1 } }
            return try await body()
        }
    }

    /// Scripts `count` answers: the k-th request waits until the group of `size` it belongs to
    /// has arrived, then gets `answer` (by default the echo of its item, version v1).
    static func enqueueGroups(
        _ f: ClientFixture, count: Int, size: Int, inFlight: InFlight,
        answer: @escaping @Sendable (SyncRequest) throws -> SyncResponse = Self.echo
    ) {
        for index in 0..<count {
            let groupEnd = min(count, (index / size + 1) * size)
            f.transport.enqueue { request in
                try await inFlight.during {
                    await f.transport.waitForRequests(groupEnd)
                    return try answer(request)
                }
            }
        }
    }

    @Sendable static func echo(_ request: SyncRequest) throws -> SyncResponse {
        var item = request.jsonObject ?? [:]
        item["version"] = "v1"
        item["updatedAt"] = "2004-04-04T04:04:04.004Z"
        return SyncResponse(statusCode: 201, headers: ["ETag": "\"v1\""], body: try JSONCoding.encode(item))
    }

    static func itemId(_ request: SyncRequest) -> String? {
        request.jsonObject?["id"]?.stringValue ?? request.path.split(separator: "/").last.map(String.init)
    }

    @Test(arguments: StoreKind.allCases)
    func operationsOfDifferentItemsGoTogetherInQueueOrder(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.context.setPushParallelism(3)
            let ids = ["a", "b", "c", "d", "e", "f", "g"]
            for id in ids { try await f.table().insert(todo(id, "text \(id)")) }
            let inFlight = InFlight()
            Self.enqueueGroups(f, count: ids.count, size: 3, inFlight: inFlight)
            try await f.context.push()
            #expect(inFlight.most == 3)
            let sent = f.transport.requests.map { Self.itemId($0) ?? "" }
            #expect(Set(sent[0..<3]) == ["a", "b", "c"])
            #expect(Set(sent[3..<6]) == ["d", "e", "f"])
            #expect(sent[6] == "g")
            #expect(try await f.operations().isEmpty)
            #expect(try await f.rows().map { $0["version"] } == ids.map { _ in "v1" })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theNextOperationGoesAsSoonAsTheOldestInFlightIsAnswered(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.context.setPushParallelism(2)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "text \(id)")) }
            // b is answered only once c has arrived: c must go while b is in flight, as soon as a
            // is answered (a push that waited for both a and b before sending c would hang).
            for _ in 0..<3 {
                f.transport.enqueue { request in
                    if Self.itemId(request) == "b" { await f.transport.waitForRequests(3) }
                    return try Self.echo(request)
                }
            }
            try await f.context.push()
            let sent = f.transport.requests.map { Self.itemId($0) ?? "" }
            #expect(Set(sent[0..<2]) == ["a", "b"] && sent[2] == "c")
            #expect(try await f.operations().isEmpty)
            #expect(try await f.rows().map { $0["version"] } == ["v1", "v1", "v1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aConflictInAGroupIsRecordedAsItsOwnRequestWouldBe(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.context.setPushParallelism(4)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            Self.enqueueGroups(f, count: 3, size: 3, inFlight: InFlight()) { request in
                guard Self.itemId(request) == "b" else { return try Self.echo(request) }
                return SyncResponse(statusCode: 409, body: try JSONCoding.encode(["id": "b", "text": "theirs", "version": "5"] as JSONObject))
            }
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.map(\.itemId) == ["b"])
            #expect(error.operationErrors.first?.statusCode == 409)
            #expect(error.operationErrors.first?.serverItem?["text"] == "theirs")
            #expect(try await f.operations().map(\.itemId) == ["b"])
            #expect(try await f.operations().first?.state == .failed)
            #expect(try await f.row("a")?["version"] == "v1")
            #expect(try await f.row("c")?["version"] == "v1")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aNetworkFailureInFlightStopsThePushAndKeepsTheOthersAnswers(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.context.setPushParallelism(3)
            for id in ["a", "b", "c", "d"] { try await f.table().insert(todo(id, "mine \(id)")) }
            // Each is answered once all three arrived: a fails, b and c succeed. Neither of their
            // answers lets d go before a's failure is taken, a being the oldest in flight.
            Self.enqueueGroups(f, count: 3, size: 3, inFlight: InFlight()) { request in
                if Self.itemId(request) == "a" { throw URLError(.networkConnectionLost) }
                return try Self.echo(request)
            }
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByNetwork)
            #expect(f.transport.requests.count == 3)  // d was never sent
            let left = try await f.operations()
            #expect(left.map(\.itemId) == ["a", "d"])
            // a may have reached the server: attempted, settled by the next push; d goes back as it was.
            #expect(left.map(\.state) == [.attempted, .pending])
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("b")?["version"] == "v1")
            #expect(try await f.row("c")?["version"] == "v1")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anExplicitCancelCancelsEveryRequestInFlight(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.context.setPushParallelism(3)
            for id in ["a", "b", "c", "d"] { try await f.table().insert(todo(id, "mine \(id)")) }
            // Each answer waits for a request that never comes: only cancelling it ends it.
            for _ in 0..<3 {
                f.transport.enqueue { request in
                    await f.transport.waitForRequests(100)
                    try Task.checkCancellation()
                    return try Self.echo(request)
                }
            }
            let push = Task { try await f.context.push() }
            await f.transport.waitForRequests(3)
            f.context.cancel()
            // (Should it hang, the time limit cancels the push's task, whose requests end then.)
            await #expect(throws: SyncError.pushCancelled) {
                try await withTaskCancellationHandler {
                    try await push.value
                } onCancel: {
                    push.cancel()
                }
            }
            #expect(f.transport.requests.count == 3)  // d was never sent
            // The three may have reached the server: attempted, settled by the next push.
            #expect(try await f.operations().map(\.state) == [.attempted, .attempted, .attempted, .pending])
        }
    }

    @Test func parallelismOutsideItsRangeIsRefusedAndChangesNothing() async throws {
        try await withClient(.plain) { f in
            for value in [0, -1, SyncContext.maximumPushParallelism + 1] {
                let error = try await #require(throws: SyncError.self) { try await f.context.setPushParallelism(value) }
                #expect(error == .invalidSetting)
            }
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            let inFlight = InFlight()
            Self.enqueueGroups(f, count: 3, size: 1, inFlight: inFlight)
            try await f.context.push()
            #expect(inFlight.most == 1)
            #expect(f.transport.requests.map { Self.itemId($0) } == ["a", "b", "c"])
        }
    }

    @Test func aConflictHandlerSeesEachOperationOfAGroup() async throws {
        let handler = CountingHandler()
        try await withClient(.encrypted, handler: handler) { f in
            try await f.context.setPushParallelism(2)
            for id in ["a", "b"] { try await f.table().insert(todo(id, "mine \(id)")) }
            Self.enqueueGroups(f, count: 2, size: 2, inFlight: InFlight())
            try await f.context.push()
            #expect(handler.executed.sorted() == ["a", "b"])
            #expect(try await f.operations().isEmpty)
        }
    }

    /// Records the item of every operation it executes.
    final class CountingHandler: SyncConflictHandler {
        private let state = Mutex<[String]>([])
        var executed: [String] { state.withLock { $0 } }

        func execute(_ operation: PushOperation) async throws -> JSONObject? {
            state.withLock { $0.append(operation.itemId) }
            return try await operation.execute()
        }
    }
}
