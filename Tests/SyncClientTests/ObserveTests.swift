import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Observed queries, pending count and operation errors: each kind of change wakes them.
@Suite struct ObserveTests {
    private struct TodoModel: Codable, Sendable, Equatable {
        var id: String?
        var text: String
    }

    private static func texts(_ result: QueryResult?) -> [String] {
        (result?.items ?? []).compactMap { $0["text"]?.stringValue }
    }

    @Test(arguments: StoreKind.allCases, [false, true])
    func everyKindOfChangeToTheTableYieldsANewResult(kind: StoreKind, spied: Bool) async throws {
        // Spied: the context reaches the store through a LocalStore with no change feed, and
        // records the changes it makes itself.
        try await withClient(kind, spied: spied) { f in
            let table = try f.table()
            var results = table.observe(Query().orderBy("id")).makeAsyncIterator()
            #expect(Self.texts(try await results.next()) == [])

            try await table.insert(todo("a", "local insert"))
            #expect(Self.texts(try await results.next()) == ["local insert"])
            try await table.update(todo("a", "local update"))
            #expect(Self.texts(try await results.next()) == ["local update"])
            try await table.delete(id: "a")
            #expect(Self.texts(try await results.next()) == [])

            // A pull (the insert and its delete cancelled each other: nothing to push first): the
            // page arrives as one result.
            f.transport.enqueuePage([serverItem("b", "pulled b"), serverItem("c", "pulled c"), serverItem("d", "pulled d")])
            f.transport.enqueuePage([])
            try await table.pull()
            #expect(Self.texts(try await results.next()) == ["pulled b", "pulled c", "pulled d"])

            try await table.purge(Query().where(Field("id") == "d"))
            #expect(Self.texts(try await results.next()) == ["pulled b", "pulled c"])

            // A conflict, resolved by taking the server's item.
            try await table.update(todo("b", "mine"))
            #expect(Self.texts(try await results.next()) == ["mine", "pulled c"])
            f.transport.enqueue(status: 412, json: ["id": "b", "text": "theirs", "version": "2"])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            let failure = try #require(error.operationErrors.first)
            try await failure.cancelAndUpdate(todo("b", "theirs", version: "2"))
            #expect(Self.texts(try await results.next()) == ["theirs", "pulled c"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aWriteToAnotherTableDoesNotWakeIt(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let feed = try #require(f.store.changes)
            let (signals, registration) = feed.register([.table(named: "todo")])
            try await f.table("other").insert(todo("x", "elsewhere"))
            registration.cancel()
            var count = 0
            for await _ in signals { count += 1 }
            #expect(count == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func thePendingCountAndTheOperationErrorsAreObserved(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            var counts = f.context.observePendingOperationsCount().makeAsyncIterator()
            var errors = f.context.observeOperationErrors().makeAsyncIterator()
            #expect(try await counts.next() == 0)
            #expect(try await errors.next()?.isEmpty == true)

            try await f.table().insert(todo("a", "one"))
            #expect(try await counts.next() == 1)
            try await f.table().insert(todo("b", "two"))
            #expect(try await counts.next() == 2)

            f.transport.enqueue(status: 409, json: ["id": "a", "text": "server", "version": "5"])
            f.transport.enqueueEcho()
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            #expect(try await counts.next() == 1)
            let stored = try #require(try await errors.next())
            #expect(stored.map(\.itemId) == ["a"])

            try await stored[0].cancelAndDiscard()
            #expect(try await counts.next() == 0)
            #expect(try await errors.next()?.isEmpty == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aTypedTableYieldsModels(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.context.syncTable("todo", as: TodoModel.self)
            var models = table.observe().makeAsyncIterator()
            #expect(try await models.next() == [])
            try await table.insert(TodoModel(id: "m", text: "typed"))
            #expect(try await models.next() == [TodoModel(id: "m", text: "typed")])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheConsumerFreesTheObserver(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let feed = try #require(f.store.changes)
            let table = try f.table()
            let (seen, seenContinuation) = AsyncStream<Int>.makeStream()
            let consumer = Task {
                for try await result in table.observe() { seenContinuation.yield(result.items.count) }
            }
            var progress = seen.makeAsyncIterator()
            #expect(await progress.next() == 0)
            #expect(feed.observerCount == 1)
            try await table.insert(todo("a", "one"))
            #expect(await progress.next() == 1)
            consumer.cancel()
            try await consumer.value
            #expect(feed.observerCount == 0)
        }
    }
}
