import Foundation
import SyncSQL
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// The change feed of the store: what a committed transaction publishes, to whom, and when.
@Suite struct StoreChangesTests {
    /// Every signal an observer of `topics` receives while `body` runs (the registration is
    /// cancelled afterwards, so the signals still buffered are the ones counted).
    private func signals(
        _ store: SQLiteStore, _ topics: Set<StoreChangeTopic>, during body: () async throws -> Void
    ) async throws -> Int {
        let changes = try #require(store.changes)
        let (stream, registration) = changes.register(topics)
        try await body()
        registration.cancel()
        var count = 0
        for await _ in stream { count += 1 }
        return count
    }

    @Test(arguments: StoreKind.allCases)
    func aCommittedWriteSignalsTheObserversOfWhatItChanged(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let todo = try await signals(store, [.table(named: "todo")]) {
            try await store.upsert(table: "TODO", items: [["id": "a", "text": "t"]])
        }
        #expect(todo == 1)
        let other = try await signals(store, [.table(named: "todo")]) {
            try await store.upsert(table: "other", items: [["id": "a", "text": "t"]])
        }
        #expect(other == 0)
        let queue = try await signals(store, [.operations]) {
            _ = try await store.write { try $0.addOperation(kind: .insert, table: "todo", itemId: "a", item: nil) }
        }
        #expect(queue == 1)
        let errorsOfQueueWrite = try await signals(store, [.operationErrors]) {
            _ = try await store.write { try $0.addOperation(kind: .insert, table: "todo", itemId: "b", item: nil) }
        }
        #expect(errorsOfQueueWrite == 0)
        let reads = try await signals(store, [.table(named: "todo"), .operations, .operationErrors, .config]) {
            _ = try await store.read { try $0.read(QueryDescription(table: "todo")) }
            _ = try await store.write { try $0.read(QueryDescription(table: "todo")) }
        }
        #expect(reads == 0)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aRolledBackWriteSignalsNobody(_ kind: StoreKind) async throws {
        struct Abort: Error {}
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let count = try await signals(store, [.table(named: "todo"), .operations]) {
            await #expect(throws: Abort.self) {
                try await store.write { writer in
                    try writer.upsert(table: "todo", items: [["id": "a"]], ignoreMissingColumns: false)
                    _ = try writer.addOperation(kind: .insert, table: "todo", itemId: "a", item: nil)
                    throw Abort()
                }
            }
        }
        #expect(count == 0)
        #expect(try await store.lookup(table: "todo", id: "a") == nil)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func signalsCoalesceWhileTheObserverIsBusy(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let count = try await signals(store, [.table(named: "todo")]) {
            for n in 1...50 { try await store.upsert(table: "todo", items: [["id": "a", "n": .int(Int64(n))]]) }
        }
        #expect(count == 1)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func anObservationYieldsTheCurrentResultThenTheResultAfterEachChange(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let query = QueryDescription(table: "todo", orderBy: [OrderBy("id")])
        let reads = Counter()
        let observation = StoreObservation(
            changes: store.changes, topics: [.table(named: "todo")],
            read: {
                reads.increment()
                return try await store.read(query).items.map { $0["id"] }
            })
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == [])
        try await store.upsert(table: "todo", items: [["id": "a"]])
        #expect(try await iterator.next() == ["a"])
        // A write to another table does not wake it: the next value is the one after "b".
        try await store.upsert(table: "other", items: [["id": "x"]])
        #expect(store.changes?.observerCount == 1)
        try await store.upsert(table: "todo", items: [["id": "b"]])
        #expect(try await iterator.next() == ["a", "b"])
        #expect(reads.value == 3)
        try await store.delete(table: "todo", ids: ["a"])
        #expect(try await iterator.next() == ["b"])
        // A burst while the consumer is away: one value, the final state.
        for n in 1...30 { try await store.upsert(table: "todo", items: [["id": .string("c\(n)")]]) }
        let afterBurst = try await iterator.next()
        #expect(afterBurst?.count == 31)
        #expect(reads.value == 5)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aBurstOfTransactionsYieldsOnlyStatesThatExistedAndEndsOnTheLast(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "pair", items: [["id": "a", "n": 0], ["id": "b", "n": 0]])
        let observation = StoreObservation(
            changes: store.changes, topics: [.table(named: "pair")],
            removingDuplicates: {
                try await store.read(QueryDescription(table: "pair", orderBy: [OrderBy("id")])).items.map { $0["n"] }
            })
        let last: Int64 = 200
        let writer = Task {
            // Each transaction moves both rows to the same n: a state with them apart never existed.
            for n in 1...last {
                try await store.upsert(table: "pair", items: [["id": "a", "n": .int(n)], ["id": "b", "n": .int(n)]])
            }
        }
        var seen: [Int64] = []
        for try await values in observation {
            #expect(values.count == 2 && values[0] == values[1])
            guard case .int(let n)? = values.first else {
                Issue.record("no rows")
                break
            }
            if let previous = seen.last { #expect(n > previous) }
            seen.append(n)
            if n == last { break }
        }
        try await writer.value
        #expect(seen.last == last)
        // Busy readers coalesce: far fewer values than transactions is allowed, one per transaction at most.
        #expect(seen.count <= Int(last) + 1)
        #expect(store.changes?.observerCount == 0)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheConsumingTaskRemovesTheObserver(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let changes = try #require(store.changes)
        let observation = StoreObservation(
            changes: changes, topics: [.table(named: "todo")],
            removingDuplicates: {
                try await store.read(QueryDescription(table: "todo")).items.count
            })
        let (started, startedContinuation) = AsyncStream<Int>.makeStream()
        let consumer = Task {
            var values = 0
            for try await count in observation {
                values += 1
                startedContinuation.yield(count)
            }
            return values
        }
        var progress = started.makeAsyncIterator()
        #expect(await progress.next() == 0)
        #expect(changes.observerCount == 1)
        try await store.upsert(table: "todo", items: [["id": "a"]])
        #expect(await progress.next() == 1)
        consumer.cancel()
        let values = try await consumer.value
        #expect(values == 2)
        #expect(changes.observerCount == 0)
        // Leaving the loop early frees it too.
        for try await _ in observation { break }
        #expect(changes.observerCount == 0)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aReadThatFailsEndsTheObservationWithItsError(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let changes = try #require(store.changes)
        let observation = StoreObservation(
            changes: changes, topics: [.table(named: "todo")],
            removingDuplicates: {
                try await store.read(QueryDescription(table: "todo")).items.count
            })
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        try await store.close()
        await #expect(throws: StoreError.closed) { try await store.upsert(table: "todo", items: [["id": "a"]]) }
        changes.publish([.table(named: "todo")])
        await #expect(throws: StoreError.closed) { _ = try await iterator.next() }
        #expect(changes.observerCount == 0)
        #expect(try await iterator.next() == nil)
    }
}

/// A count shared with a `@Sendable` closure.
private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
