import Foundation
@_spi(Testing) import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// Pushes with the batch extension (``PushBatching/automatic``): consecutive operations of one
/// table in one request, each result recorded as its own request's answer would be; the queue,
/// crash safety and the fallback to one request per operation.
@Suite struct BatchPushTests {
    static let stamp = "2003-03-03T03:03:03.003Z"

    /// Scripts `GET /capabilities` advertising batches of `most` operations.
    static func enqueueCapabilities(_ f: ClientFixture, most: Int = 100) {
        f.transport.enqueue(status: 200, json: ["batch": ["maxOperations": .int(Int64(most))]])
    }

    /// Scripts a batch answer: `result` gives each operation's result from its index and entry.
    static func enqueueBatch(_ f: ClientFixture, result: @escaping @Sendable (Int, JSONObject) -> JSONObject = { _, entry in created(entry) }) {
        f.transport.enqueue { request in try batchAnswer(request, result: result) }
    }

    /// The answer to a batch request: `result` gives each operation's result from its index and entry.
    static func batchAnswer(
        _ request: SyncRequest, result: (Int, JSONObject) -> JSONObject = { _, entry in created(entry) }
    ) throws -> SyncResponse {
        let entries = request.jsonObject?["operations"]?.arrayValue ?? []
        let results = entries.enumerated().map { index, entry in JSONValue.object(result(index, entry.objectValue ?? [:])) }
        return SyncResponse(statusCode: 200, body: try JSONCoding.encode(["results": JSONValue.array(results)] as JSONObject))
    }

    /// The success a server answers an insert or update with: the item, stamped, version `v`.
    static func created(_ entry: JSONObject, version: String = "v1") -> JSONObject {
        var item = entry["item"]?.objectValue ?? ["id": entry["id"] ?? nil]
        item["version"] = .string(version)
        item["createdAt"] = .string(stamp)
        item["updatedAt"] = .string(stamp)
        return ["status": entry["method"] == "POST" ? 201 : 200, "etag": .string("\"\(version)\""), "body": .object(item)]
    }

    static func operations(of request: SyncRequest) -> [JSONObject] {
        request.jsonObject?["operations"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    /// The answers of one recording are stored run by run (a run per table): each item still
    /// gets its own answer.
    @Test(arguments: StoreKind.allCases)
    func eachAnswerIsStoredInItsOwnRowAcrossTables(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "new \(id)")) }
            try await f.table("notes").insert(todo("n", "a note"))
            for id in ["d", "e"] { try await f.table().insert(todo(id, "new \(id)")) }
            Self.enqueueCapabilities(f)
            let versioned: @Sendable (Int, JSONObject) -> JSONObject = { _, entry in
                Self.created(entry, version: "s-" + (entry["item"]?.objectValue?["id"]?.stringValue ?? "?"))
            }
            Self.enqueueBatch(f, result: versioned)
            f.transport.enqueueEcho(version: "s-n")
            Self.enqueueBatch(f, result: versioned)
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            for id in ["a", "b", "c", "d", "e"] {
                let row = try await f.row(id)
                #expect(row?["version"] == .string("s-\(id)"), "\(id)")
                #expect(row?["text"] == .string("new \(id)"), "\(id)")
            }
            #expect(try await f.row("n", table: "notes")?["version"] == "s-n")
            #expect(try await f.row("n") == nil, "the note stays in its own table")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func consecutiveOperationsOfATableGoInOneRequestInQueueOrder(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            try await f.store.upsert(table: "todo", items: [todo("old", "kept", version: "v0"), todo("gone", "bye", version: "v0")])
            for id in ["a", "b"] { try await f.table().insert(todo(id, "new \(id)")) }
            try await f.table().update(todo("old", "edited", version: "v0"))
            try await f.table("notes").insert(todo("n", "a note"))
            try await f.table().delete(id: "gone")
            try await f.table().insert(todo("c", "new c"))
            Self.enqueueCapabilities(f)
            Self.enqueueBatch(f)
            f.transport.enqueueEcho()
            Self.enqueueBatch(f)
            try await f.context.push()
            let requests = f.transport.requests
            #expect(requests.map(\.line) == ["GET /app/capabilities", "POST /app/batch/todo", "POST /app/tables/notes", "POST /app/batch/todo"])
            let first = Self.operations(of: requests[1])
            #expect(first.map { $0["method"] } == ["POST", "POST", "PATCH"])
            #expect(first.map { $0["id"] ?? $0["item"]?.objectValue?["id"] } == ["a", "b", "old"])
            #expect(first[2]["ifMatch"] == "\"v0\"" && first[2]["item"]?.objectValue?["text"] == "edited")
            #expect(first[2]["item"]?.objectValue?["version"] == nil, "system properties are not sent")
            let last = Self.operations(of: requests[3])
            #expect(last.map { $0["method"] } == ["DELETE", "POST"])
            #expect(last[0] == ["method": "DELETE", "id": "gone", "ifMatch": "\"v0\""])
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("a")?["version"] == "v1")
            #expect(try await f.row("old")?["text"] == "edited")
            #expect(try await f.row("c")?["updatedAt"] == .string(Self.stamp))
            // the capabilities are asked for once per context
            try await f.table().insert(todo("d", "one more"))
            try await f.table().insert(todo("e", "and another"))
            Self.enqueueBatch(f)
            try await f.context.push()
            #expect(f.transport.requests.map(\.line).suffix(1) == ["POST /app/batch/todo"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aConflictInsideABatchIsRecordedAndTheOthersAreApplied(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            Self.enqueueCapabilities(f)
            Self.enqueueBatch(f) { index, entry in
                guard index == 1 else { return Self.created(entry) }
                let theirs: JSONObject = ["id": "b", "text": "theirs", "version": "s9", "updatedAt": .string(Self.stamp)]
                return ["status": 409, "etag": "\"s9\"", "body": .object(theirs)]
            }
            let error = await #expect(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            let failed = try #require(error?.operationErrors.first)
            #expect(error?.operationErrors.count == 1)
            #expect(failed.itemId == "b" && failed.statusCode == 409 && failed.serverItem?["text"] == "theirs")
            #expect(failed.serverItem?["version"] == "s9")
            #expect(try await f.operations().map(\.itemId) == ["b"])
            #expect(try await f.operations().first?.state == .failed)
            #expect(try await f.row("a")?["version"] == "v1")
            #expect(try await f.row("c")?["version"] == "v1")
            #expect(try await f.row("b")?["text"] == "mine b")
            #expect(f.transport.requests.count == 2)
        }
    }

    /// No answer (or a 401) to a batch: nothing is recorded, every operation of the batch stays
    /// attempted, and the next push settles them (the server had applied them).
    @Test(arguments: StoreKind.allCases, [false, true])
    func aBatchWithoutAnAnswerIsSettledByTheNextPush(kind: StoreKind, unauthorized: Bool) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            Self.enqueueCapabilities(f)
            if unauthorized { f.transport.enqueue(status: 401, json: ["error": "Unauthorized"]) } else { f.transport.enqueueNetworkError() }
            let error = await #expect(throws: SyncError.self) { try await f.context.push() }
            #expect(error == (unauthorized ? SyncError.pushAbortedByAuthentication : SyncError.pushAbortedByNetwork))
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.operations().map(\.state) == [.attempted, .attempted, .attempted])
            #expect(try await f.row("a")?["version"] == nil)
            // The server had applied them: each insert is answered 409 with what was sent.
            Self.enqueueBatch(f) { _, entry in
                var stored = Self.created(entry, version: "s1")
                stored["status"] = 409
                return stored
            }
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("b")?["version"] == "s1")
            #expect(f.transport.requests.map(\.line).suffix(2) == ["POST /app/batch/todo", "POST /app/batch/todo"])
        }
    }

    /// A server without the extension: no capability (404) or no batch route (404, 405); one
    /// request per operation, as without batching.
    @Test(arguments: StoreKind.allCases, ["no capabilities", "no route 404", "no route 405"])
    func aServerWithoutTheExtensionGetsOneRequestPerOperation(kind: StoreKind, server: String) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b"] { try await f.table().insert(todo(id, "mine \(id)")) }
            if server == "no capabilities" {
                f.transport.enqueue(status: 404, json: ["error": "Not Found"])
            } else {
                Self.enqueueCapabilities(f)
                f.transport.enqueue(status: server.hasSuffix("404") ? 404 : 405, body: Data())
            }
            f.transport.enqueueEcho()
            f.transport.enqueueEcho()
            try await f.context.push()
            let lines = f.transport.requests.map(\.line)
            let probe = server == "no capabilities" ? ["GET /app/capabilities"] : ["GET /app/capabilities", "POST /app/batch/todo"]
            #expect(lines == probe + ["POST /app/tables/todo", "POST /app/tables/todo"])
            #expect(try await f.context.pendingOperationsCount == 0)
            // and it is not asked again
            for id in ["c", "d"] { try await f.table().insert(todo(id, "mine \(id)")) }
            f.transport.enqueueEcho()
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line).suffix(2) == ["POST /app/tables/todo", "POST /app/tables/todo"])
            #expect(f.transport.requests.count == lines.count + 2)
        }
    }

    /// Operations a push claimed and never sent (it stopped first) are pending again; the one
    /// sent without an answer stays attempted.
    @Test(arguments: StoreKind.allCases)
    func operationsClaimedButNotSentGoBackToPending(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            f.transport.enqueueEcho()
            f.transport.enqueueNetworkError()
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            #expect(try await f.operations().map(\.itemId) == ["b", "c"])
            #expect(try await f.operations().map(\.state) == [.attempted, .pending])
            #expect(try await f.row("a")?["version"] == "1")
        }
    }

    /// Batches are pipelined: while a batch is at the server, the next operations are claimed
    /// and the next batch written; it goes only once the batch before it is answered.
    @Test(.timeLimit(.minutes(2)), arguments: StoreKind.allCases)
    func theNextBatchIsClaimedWhileOneIsAtTheServerAndSentAfterItsAnswer(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let most = 64  // one batch per claim (a push claims at least 64 operations at a time)
            let claimed = Mutex(0)
            let thirdClaimed = AsyncGate()
            let context = SyncContext(
                client: f.client, store: f.store,
                checkpoint: { step in
                    guard step == .pushClaimed else { return }
                    let count = claimed.withLock { count in
                        count += 1
                        return count
                    }
                    if count == 3 * most { thirdClaimed.open() }
                })
            await context.setPushBatching(.automatic)
            try await Self.queueInserts(f, count: 3 * most)
            Self.enqueueCapabilities(f, most: most)
            let answered = Mutex(0)
            for batch in 0..<3 {
                f.transport.enqueue { request in
                    #expect(answered.withLock { $0 } == batch, "batch \(batch + 1) is sent after the one before it is answered")
                    if batch == 1 {
                        await thirdClaimed.wait()
                        #expect(claimed.withLock { $0 } == 3 * most, "the third batch is claimed while the second is at the server")
                    }
                    defer { answered.withLock { $0 += 1 } }
                    return try Self.batchAnswer(request)
                }
            }
            try await context.push()
            #expect(try await context.pendingOperationsCount == 0)
            #expect(f.transport.requests.map(\.line) == ["GET /app/capabilities"] + Array(repeating: "POST /app/batch/todo", count: 3))
            let ids = f.transport.requests.dropFirst().flatMap { Self.operations(of: $0).compactMap { $0["item"]?.objectValue?["id"]?.stringValue } }
            #expect(ids == (0..<(3 * most)).map { String(format: "i%04d", $0) }, "queue order")
            #expect(try await f.row("i0191")?["version"] == "v1")
        }
    }

    /// A batch ready beside the one at the server is sent when that one is answered, while the
    /// push is still busy in the store (here: its claim of the third batch, held until the
    /// second batch has reached the server).
    @Test(.timeLimit(.minutes(2)), arguments: StoreKind.allCases)
    func aReadyBatchIsSentWhileThePushIsInTheStore(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let most = 64
            let pushing = PipelinedPullTests.Flag()
            let writes = PipelinedPullTests.Counter()
            let (thirdClaimHeld, secondBatchSent) = (AsyncGate(), AsyncGate())
            let store = PipelinedPullTests.HeldStore(f.store) {
                guard pushing.isSet, writes.next() == 3 else { return }
                thirdClaimHeld.open()
                await secondBatchSent.wait()
            }
            let context = SyncContext(client: f.client, store: store)
            await context.setPushBatching(.automatic)
            try await Self.queueInserts(f, count: 3 * most)
            Self.enqueueCapabilities(f, most: most)
            f.transport.enqueue { request in
                await thirdClaimHeld.wait()
                return try Self.batchAnswer(request)
            }
            f.transport.enqueue { request in
                secondBatchSent.open()
                return try Self.batchAnswer(request)
            }
            Self.enqueueBatch(f)
            pushing.set()
            try await context.push()
            #expect(try await context.pendingOperationsCount == 0)
            let ids = f.transport.requests.dropFirst().flatMap { Self.operations(of: $0).compactMap { $0["item"]?.objectValue?["id"]?.stringValue } }
            #expect(ids == (0..<(3 * most)).map { String(format: "i%04d", $0) }, "queue order")
        }
    }

    /// Large batches start smaller: a quarter of the limit, then twice as large each time, up to
    /// it; a server advertising more than the client's ceiling (a push holds up to three batches
    /// at once) gets batches of at most that many operations.
    @Test(arguments: [(800, [256, 512, 800, 532]), (100_000, [256, 512, 1_000, 332])])
    func largeBatchesStartSmallerWithinTheClientsCeiling(advertised: Int, sizes: [Int]) async throws {
        #expect(SyncContext.maximumBatchOperations == 1_000)
        for kind in StoreKind.allCases {
            try await withClient(kind) { f in
                try await Self.queueInserts(f, count: 2_100)
                Self.enqueueCapabilities(f, most: advertised)
                for _ in 0..<4 { Self.enqueueBatch(f) }
                try await f.context.push()
                #expect(f.transport.requests.dropFirst().map { Self.operations(of: $0).count } == sizes, "\(kind)")
                #expect(try await f.context.pendingOperationsCount == 0)
            }
        }
    }

    /// Queues `count` inserts of the todo table in one store transaction.
    static func queueInserts(_ f: ClientFixture, count: Int) async throws {
        await f.context.setPushBatching(.automatic)
        try await f.context.store.write { writer in
            for i in 0..<count {
                let id = String(format: "i%04d", i)
                try writer.upsert(table: "todo", items: [todo(id, "new")], ignoreMissingColumns: false)
                _ = try writer.addOperation(kind: .insert, table: "todo", itemId: id, item: nil)
            }
        }
    }

    /// A batch without an answer stops the pipeline: the batch written meanwhile is never sent,
    /// and its operations are pending again; those of the batch before are recorded.
    @Test(arguments: StoreKind.allCases)
    func aBatchWithoutAnAnswerStopsThePipeline(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let most = 64
            await f.context.setPushBatching(.automatic)
            for i in 0..<(3 * most) { try await f.table().insert(todo(String(format: "i%03d", i), "new \(i)")) }
            Self.enqueueCapabilities(f, most: most)
            Self.enqueueBatch(f)
            f.transport.enqueueNetworkError()
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            #expect(f.transport.requests.count == 3, "capabilities and two batches; the third is not sent")
            let states = try await f.operations().map(\.state)
            #expect(states == Array(repeating: .attempted, count: most) + Array(repeating: .pending, count: most))
            #expect(try await f.operations().first?.itemId == "i064")
            #expect(try await f.row("i063")?["version"] == "v1")
            #expect(try await f.storedErrors().isEmpty)
        }
    }

    /// A batch answered 413 (its body over what the server takes; nothing applied) goes again
    /// as batches half as large, in queue order.
    @Test(arguments: StoreKind.allCases)
    func aBatchAnswered413GoesAgainInHalves(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b", "c", "d"] { try await f.table().insert(todo(id, "new \(id)")) }
            Self.enqueueCapabilities(f, most: 4)
            f.transport.enqueue(status: 413, json: ["error": "Payload Too Large"])
            Self.enqueueBatch(f)
            Self.enqueueBatch(f)
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            let sent = f.transport.requests.dropFirst().map { Self.operations(of: $0).compactMap { $0["item"]?.objectValue?["id"]?.stringValue } }
            #expect(sent == [["a", "b", "c", "d"], ["a", "b"], ["c", "d"]])
        }
    }

    /// A server that says the largest body it takes (`maxBytes`) gets no batch over it: the push
    /// cuts a batch before sending it, so nothing goes twice.
    @Test(arguments: StoreKind.allCases)
    func aBatchOverTheAdvertisedBodySizeIsCutBeforeItIsSent(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            let ids = (0..<10).map { "i\($0)" }
            for id in ids { try await f.table().insert(todo(id, String(repeating: "x", count: 100))) }
            let most = 600
            f.transport.enqueue(status: 200, json: ["batch": ["maxOperations": 100, "maxBytes": .int(Int64(most))]])
            for _ in 0..<10 { Self.enqueueBatch(f) }
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            let batches = f.transport.requests.dropFirst()
            #expect(batches.allSatisfy { ($0.body?.count ?? 0) <= most }, "\(batches.map { $0.body?.count ?? 0 })")
            #expect(batches.count > 1 && batches.count < 10, "cut, but still batches")
            #expect(batches.flatMap { Self.operations(of: $0).compactMap { $0["item"]?.objectValue?["id"]?.stringValue } } == ids)
        }
    }

    /// With a conflict handler, each operation has its own request (the handler sees it).
    @Test(arguments: StoreKind.allCases)
    func aConflictHandlerKeepsOneRequestPerOperation(kind: StoreKind) async throws {
        struct PassThrough: SyncConflictHandler {}
        try await withClient(kind, handler: PassThrough()) { f in
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b"] { try await f.table().insert(todo(id, "mine \(id)")) }
            f.transport.enqueueEcho()
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo", "POST /app/tables/todo"])
        }
    }
}
