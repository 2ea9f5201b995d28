import CipherSync
import Foundation
import InMemoryStoreSupport
import Testing

/// A store that keeps the engine's records as rows of its own tables publishes those tables'
/// names (or nothing); the engine publishes the topics of its records itself, so an observer of
/// the queue hears of an offline write either way.
@Suite struct EngineChangeFeedTests {
    @Test(arguments: [true, false])
    func theQueuesObserverSeesAnOfflineWrite(storePublishes: Bool) async throws {
        let store = InMemoryStore(publishesChanges: storePublishes)
        let context = SyncContext(client: MobileServiceClient(url: URL(fileURLWithPath: "/")), store: store)
        let todo = try context.syncTable("todo")
        let counts = await withThrowingTaskGroup(of: [Int].self) { group in
            group.addTask {
                var seen: [Int] = []
                for try await count in context.observePendingOperationsCount() {
                    seen.append(count)
                    if seen.count == 1 { _ = try await todo.insert(["id": "a"]) }
                    if seen.count == 2 { break }
                }
                return seen
            }
            group.addTask {
                // A guard against a missing signal, not a synchronisation: the test fails then.
                try await Task.sleep(for: .seconds(10))
                return []
            }
            let first = (try? await group.next()) ?? []
            group.cancelAll()
            return first ?? []
        }
        #expect(counts == [0, 1])
    }
}
