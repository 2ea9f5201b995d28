import CipherSyncStoreConformance
import InMemoryStoreSupport
import SyncStore
import SyncTestSupport
import Synchronization
import Testing

/// The conformance suite of the store contract, on the three stores: the plain and the encrypted
/// SQLite store, and the in-memory store written against the public contract alone.
@Suite struct StoreConformanceTests {
    @Test(arguments: StoreKind.allCases)
    func theSQLiteStorePassesTheSuite(_ kind: StoreKind) async {
        let made = Mutex<[TestStore]>([])
        let failures = await StoreConformance.run(
            makeStore: {
                let (test, store) = try await TestStore.make(kind)
                made.withLock { $0.append(test) }
                return store
            },
            dispose: { store in try await (store as? SQLiteStore)?.close() })
        for test in made.withLock({ $0 }) { test.directory.remove() }
        #expect(failures.isEmpty, "\(failures)")
        #expect(made.withLock { $0.count } == StoreConformance.checkNames.count)
    }

    @Test(arguments: [true, false])
    func theInMemoryStorePassesTheSuite(publishingChanges: Bool) async {
        let failures = await StoreConformance.run { InMemoryStore(publishesChanges: publishingChanges) }
        #expect(failures.isEmpty, "\(failures)")
    }
}
