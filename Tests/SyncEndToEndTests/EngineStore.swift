import InMemoryStoreSupport
import SyncStore
import SyncTestSupport

/// The stores the engine's end-to-end behaviour is checked on: the SQLite store, plain and
/// encrypted, and the in-memory store written against the public store contract alone.
enum EngineStore: String, CaseIterable, Sendable, CustomStringConvertible {
    case plain, encrypted, inMemory

    var description: String { rawValue }

    /// A new, empty store of this kind, and what closes it and removes its files.
    func make() async throws -> (store: any LocalStore, close: @Sendable () async throws -> Void) {
        switch self {
        case .plain, .encrypted:
            let (test, store) = try await TestStore.make(self == .plain ? .plain : .encrypted)
            return (
                store,
                {
                    try await store.close()
                    test.directory.remove()
                }
            )
        case .inMemory:
            return (InMemoryStore(), {})
        }
    }
}
