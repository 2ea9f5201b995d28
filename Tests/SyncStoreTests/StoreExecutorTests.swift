import Dispatch
import Foundation
import SyncKeys
import SyncTestSupport
import SyncWire
import Testing

@_spi(Testing) @testable import SyncStore

/// The store runs on its own serial queue: SQLite calls and key derivation stay off Swift's
/// cooperative thread pool.
@Suite struct StoreExecutorTests {
    @Test(arguments: StoreKind.allCases)
    func readsWritesAndMaintenanceRunOnTheStoresOwnQueue(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let (otherTest, other) = try await TestStore.make(kind)
        defer { otherTest.directory.remove() }
        #expect(!store.isRunningOnStoreQueue, "the test's own task is not on the store's queue")

        let inRead = try await store.read { _ in (store.isRunningOnStoreQueue, other.isRunningOnStoreQueue) }
        #expect(inRead.0, "a read closure runs on the store's queue")
        #expect(!inRead.1, "each store has a queue of its own")
        #expect(try await store.write { _ in store.isRunningOnStoreQueue }, "a write closure runs on the store's queue")
        #expect(try await store.withConnection { _ in store.isRunningOnStoreQueue })
        #expect(try await other.read { _ in other.isRunningOnStoreQueue })
        try await store.close()
        try await other.close()
    }

    /// Opening an encrypted store unlocks its key envelope. Here each envelope is a named pipe, so
    /// each unlock waits, inside `SQLiteStore.open`, until the test writes the envelope into the
    /// pipe. More opens wait at once than the cooperative pool has threads (one per core), and the
    /// task that writes the envelopes runs on that pool: it can only get to write while every
    /// unlock is waiting if the unlocks do not hold pool threads. Held on the pool, they would
    /// wait for it forever (a watchdog ends the process then, instead of hanging the run).
    @Test func unlocksThatWaitDoNotHoldTheCooperativePool() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        var tests: [TestStore] = []
        defer { for test in tests { test.directory.remove() } }
        var envelopes: [Data] = []
        for index in 0..<count {
            let (test, store) = try await TestStore.make(.encrypted)
            tests.append(test)
            try await store.upsert(table: "t", items: [["id": .string("\(index)")]])
            try await store.close()
            let envelope = KeyEnvelope.url(forDatabase: test.url)
            envelopes.append(try Data(contentsOf: envelope))
            try FileManager.default.removeItem(at: envelope)
            try #require(mkfifo(envelope.path, 0o600) == 0)
        }
        let (storeTests, pipes, contents) = (tests, tests.map { KeyEnvelope.url(forDatabase: $0.url) }, envelopes)

        let watchdog = DispatchWorkItem {
            fatalError("store unlocks held the cooperative pool: the task that feeds their envelopes never ran")
        }
        DispatchQueue(label: "watchdog").asyncAfter(deadline: .now() + 120, execute: watchdog)
        let opened = try await withThrowingTaskGroup(of: SQLiteStore?.self) { group in
            for test in storeTests {
                group.addTask { try await test.open() }
            }
            group.addTask {
                try Self.feed(pipes, with: contents)
                return nil
            }
            var stores: [SQLiteStore] = []
            for try await store in group {
                if let store { stores.append(store) }
            }
            return stores
        }
        watchdog.cancel()

        #expect(opened.count == count)
        for store in opened {
            let index = try #require(tests.firstIndex { $0.url == store.url })
            #expect(try await store.lookup(table: "t", id: "\(index)") != nil)
            try await store.close()
        }
    }

    /// Opens every pipe for writing (each open returns once an unlock has the pipe open for
    /// reading, so when all have returned, every unlock is waiting at once), then writes each
    /// envelope and closes its pipe.
    static func feed(_ pipes: [URL], with contents: [Data]) throws {
        struct PipeFailure: Error {}
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        for pipe in pipes {
            let descriptor = open(pipe.path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw PipeFailure() }
            descriptors.append(descriptor)
        }
        for (descriptor, data) in zip(descriptors, contents) {
            let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == data.count else { throw PipeFailure() }
        }
    }
}
