import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// An insert that may exist on the server (its push got no answer, a 408 or a 5xx, or it was sent
/// and no outcome was recorded) cannot be cancelled by a local delete: the delete is refused until
/// the insert is pushed or discarded. A clear refusal (400, 409, 412) proves it is not there, and
/// a delete cancels both as before, unless the refusal's copy shows that the server has an item of
/// that id: then the delete goes to that copy.
@Suite struct UncertainInsertTests {
    enum Outcome: CustomStringConvertible, Sendable {
        case noAnswer
        case status(Int)

        var description: String {
            switch self {
            case .noAnswer: return "no answer"
            case .status(let code): return "HTTP \(code)"
            }
        }

        func enqueue(_ transport: FakeSyncTransport) {
            switch self {
            case .noAnswer: transport.enqueueNetworkError()
            case .status(let code): transport.enqueue(status: code, json: ["id": "a", "text": "server", "version": "s1"])
            }
        }
    }

    static let uncertain: [Outcome] = [.noAnswer, .status(408), .status(500), .status(502), .status(503), .status(504)]
    static let refused: [Outcome] = [.status(400), .status(409), .status(412)]
    static let refusedWithCopy = [409, 412]

    @Test(arguments: StoreKind.allCases, uncertain)
    func aDeleteIsRefusedUntilTheInsertIsPushed(kind: StoreKind, outcome: Outcome) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "maybe on the server"))
            outcome.enqueue(f.transport)
            await #expect(throws: SyncError.self) { try await f.context.push() }

            let refusal = try await #require(throws: SyncError.self) { try await table.delete(id: "a") }
            #expect(refusal == .operationNotAllowed)
            #expect(refusal.reason?.contains("push first") == true, "\(refusal)")
            #expect(try await f.operations().map(\.kind) == [.insert])
            #expect(try await f.row("a")?["text"] == "maybe on the server")

            // Pushed, the item is the server's too: the delete is queued and sent.
            f.transport.enqueueEcho(status: 201, version: "v1")
            try await f.context.push()
            try await table.delete(id: "a")
            #expect(try await f.operations().map(\.kind) == [.delete])
            f.transport.enqueue(status: 200)
            try await f.context.push()
            #expect(f.transport.requests.last?.line == "DELETE /app/tables/todo/a")
            #expect(f.transport.requests.last?.header("If-Match") == "\"v1\"")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anInsertSentWithNoRecordedOutcomeIsNotCancelledEither(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "sent before a crash"))
            // What a push that crashed after sending leaves behind: the operation marked attempted.
            try await f.store.write { writer in
                guard var operation = try writer.operation(table: "todo", itemId: "a") else { return }
                operation.state = .attempted
                try writer.updateOperation(operation)
            }
            await #expect(throws: SyncError.operationNotAllowed) { try await table.delete(id: "a") }
            #expect(try await f.operations().map(\.kind) == [.insert])
            #expect(try await f.row("a") != nil)
        }
    }

    @Test(arguments: StoreKind.allCases, [500, 503])
    func discardingTheFailedInsertIsAllowed(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "to be dropped"))
            f.transport.enqueue(status: status, json: ["error": "failed"])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            let failure = try #require(error.operationErrors.first)
            #expect(failure.statusCode == status)
            await #expect(throws: SyncError.operationNotAllowed) { try await table.delete(id: "a") }
            try await failure.cancelAndDiscard()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("a") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases, refused)
    func aClearRefusalLetsADeleteCancelBoth(kind: StoreKind, outcome: Outcome) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "refused by the server"))
            switch outcome {
            case .status(let status) where Self.refusedWithCopy.contains(status):
                // The server's copy is deleted: the server has no item of that id either.
                f.transport.enqueue(status: status, json: ["id": "a", "text": "server", "version": "s1", "deleted": true])
            default: outcome.enqueue(f.transport)
            }
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            try await table.delete(id: "a")
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a") == nil)
            let sent = f.transport.requests.count
            try await f.context.push()
            #expect(f.transport.requests.count == sent, "nothing is sent")
        }
    }

    /// An insert refused because the server has an item of that id (the refusal's copy, here
    /// this client's own first attempt, answered too late, and edited since): a delete is not
    /// cancelled with it but deletes that copy, over its version.
    @Test(arguments: StoreKind.allCases, refusedWithCopy)
    func aRefusalShowingTheServersItemTurnsTheInsertIntoItsDelete(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "edited after its first attempt"))
            f.transport.enqueue(status: status, json: ["id": "a", "text": "first attempt", "version": "s1"])
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            try await table.delete(id: "a")
            #expect(try await f.operations().map(\.kind) == [.delete])
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a") == nil)

            f.transport.enqueue(status: 204)
            try await f.context.push()
            let delete = try #require(f.transport.requests.last)
            #expect(delete.line == "DELETE /app/tables/todo/a")
            #expect(delete.header("If-Match") == "\"s1\"")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    /// Edits of an insert that may be on the server keep the uncertainty (and the refusal).
    @Test(arguments: StoreKind.allCases)
    func anEditKeepsTheInsertUncertain(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "first"))
            f.transport.enqueue(status: 500, json: ["error": "internal"])
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            try await table.update(todo("a", "second"))
            await #expect(throws: SyncError.operationNotAllowed) { try await table.delete(id: "a") }
            #expect(try await f.operations().map(\.kind) == [.insert])
        }
    }
}
