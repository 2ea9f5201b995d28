import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A push records a batch's answers in a few statements (the settled operations removed at
/// once, the items stored run by run): each answer is recorded as its own would be, and a
/// recording that fails half way leaves nothing of it behind.
@Suite struct BatchRecordingTests {
    typealias Batch = BatchPushTests

    /// Successes, a conflict, a refusal and a server error in one batch, after an earlier error
    /// of an operation that now succeeds: each outcome recorded as its own request's would be.
    @Test(arguments: StoreKind.allCases)
    func aBatchMixingSuccessesConflictsAndErrorsIsRecordedOperationByOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            await f.context.setPushBatching(.automatic)
            try await f.store.upsert(table: "todo", items: [todo("old", "kept", version: "v0"), todo("gone", "bye", version: "v0")])
            for id in ["a", "x"] { try await f.table().insert(todo(id, "mine \(id)")) }
            Batch.enqueueCapabilities(f)
            Batch.enqueueBatch(f) { index, entry in index == 0 ? ["status": 400, "body": ["error": "not now"]] : Batch.created(entry) }
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            #expect(try await f.storedErrors().map(\.itemId) == ["a"])
            #expect(try await f.operations().map(\.itemId) == ["a"])
            try await f.table().update(todo("old", "edited", version: "v0"))
            for id in ["b", "c", "d"] { try await f.table().insert(todo(id, "mine \(id)")) }
            try await f.table().delete(id: "gone")
            Batch.enqueueBatch(f) { _, entry in
                switch entry["id"]?.stringValue ?? entry["item"]?.objectValue?["id"]?.stringValue {
                case "b":
                    let theirs: JSONObject = ["id": "b", "text": "theirs", "version": "s9", "updatedAt": .string(Batch.stamp)]
                    return ["status": 409, "etag": "\"s9\"", "body": .object(theirs)]
                case "c": return ["status": 400, "body": ["error": "text too long"]]
                case "d": return ["status": 503, "body": ["error": "busy"]]
                default: return Batch.created(entry)
                }
            }
            let error = await #expect(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            let sent = Batch.operations(of: f.transport.requests[2])
            #expect(sent.map { $0["id"] ?? $0["item"]?.objectValue?["id"] } == ["a", "old", "b", "c", "d", "gone"])
            let errors = try await f.storedErrors()
            #expect(errors.map(\.itemId) == ["b", "c", "d"])
            #expect(errors.map(\.statusCode) == [409, 400, 503])
            #expect(errors[0].serverItem?["text"] == "theirs" && errors[0].conflict != nil)
            #expect(errors[1].rawResponse?.contains("text too long") == true)
            let left = try await f.operations()
            #expect(left.map(\.itemId) == ["b", "c", "d"])
            #expect(left.map(\.state) == [.failed, .failed, .attempted], "a 503 leaves the outcome open")
            #expect(try await f.row("a")?["version"] == "v1")
            let old = try await f.row("old")
            #expect(old?["text"] == "edited" && old?["version"] == "v1")
            #expect(try await f.row("b")?["text"] == "mine b")
            #expect(try await f.row("gone") == nil)
            // The next push sends the three again and settles them.
            Batch.enqueueBatch(f) { _, entry in Batch.created(entry, version: "v2") }
            try await f.context.push()
            #expect(Batch.operations(of: f.transport.requests[3]).count == 3)
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            for id in ["b", "c", "d"] { #expect(try await f.row(id)?["version"] == "v2", "\(id)") }
            #expect(f.transport.requests.count == 4)
        }
    }

    /// The recording transaction fails after it removed the settled operations and recorded the
    /// conflict, while storing the items: none of it stays; the operations stay attempted, and
    /// the next push sends them again and settles each once.
    @Test(arguments: StoreKind.allCases)
    func aRecordingThatFailsHalfWayLeavesNothingHalfRecorded(kind: StoreKind) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy)
            await f.context.setPushBatching(.automatic)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            Batch.enqueueCapabilities(f)
            Batch.enqueueBatch(f) { index, entry in
                guard index == 1 else { return Batch.created(entry) }
                return ["status": 409, "etag": "\"s9\"", "body": ["id": "b", "text": "theirs", "version": "s9"]]
            }
            spy.set(.storeItems)
            let error = await #expect(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByLocalStore)
            spy.set(.storeItems, false)
            #expect(try await f.storedErrors().isEmpty, "the conflict's record went with the transaction")
            #expect(try await f.operations().map(\.itemId) == ["a", "b", "c"])
            #expect(try await f.operations().map(\.state) == [.attempted, .attempted, .attempted])
            for id in ["a", "b", "c"] { #expect(try await f.row(id)?["version"] == nil, "\(id)") }
            Batch.enqueueBatch(f) { _, entry in Batch.created(entry, version: "v2") }
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            for id in ["a", "b", "c"] { #expect(try await f.row(id)?["version"] == "v2", "\(id)") }
            #expect(f.transport.requests.map(\.line) == ["GET /app/capabilities", "POST /app/batch/todo", "POST /app/batch/todo"])
        }
    }
}
