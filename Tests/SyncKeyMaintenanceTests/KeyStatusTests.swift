import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTestSupport
import Testing

/// `StoreKeys.status`: what can be known about a store's keys without its passphrase.
@Suite struct KeyStatusTests {
    @Test func rotationIsDueAfterTheConfiguredPeriod() async throws {
        let (test, store) = try await TestStore.make(.encrypted)
        defer { test.directory.remove() }
        try await store.close()
        let envelope = KeyEnvelope.url(forDatabase: test.url)
        let created = try #require(KeyEnvelope.date(from: try KeyEnvelope.read(from: envelope).keyCreatedAt))
        let soon = try StoreKeys.status(forDatabase: test.url, now: created.addingTimeInterval(364 * 86_400))
        let late = try StoreKeys.status(forDatabase: test.url, now: created.addingTimeInterval(366 * 86_400))
        let custom = try StoreKeys.status(forDatabase: test.url, rotationPeriodDays: 30, now: created.addingTimeInterval(31 * 86_400))
        #expect(!soon.rotationDue && late.rotationDue && custom.rotationDue)
    }
}
