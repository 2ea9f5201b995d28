import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A full or failing disk under the client: `localStoreFailed` (and a push's
/// `pushAbortedByLocalStore`) carry the store's kind and its sentence, so an app can say what to do.
@Suite struct StoreFailureKindTests {
    static let full = StoreError.diskFull(
        "The disk holding todo.db is full; the last change was not saved. Free some disk space, then try again (and sync again); what was saved before is kept."
    )

    @Test(arguments: [full, StoreError.ioError("A disk I/O error occurred on todo.db.")])
    func anOfflineWriteCarriesTheStoreKind(_ failure: StoreError) async throws {
        try await withClient(.plain, spied: true) { f in
            let spy = try #require(f.spy)
            spy.beforeEachWrite { _ in throw failure }
            let error = try await #require(throws: SyncError.self) { _ = try await f.table().insert(["text": "x"]) }
            #expect(error == .localStoreFailed)
            #expect(error.storeError == failure)
            #expect(error.reason == failure.description)
        }
    }

    @Test func aPushAbortedByAFullDiskCarriesTheStoreKind() async throws {
        try await withClient(.plain, spied: true) { f in
            let spy = try #require(f.spy)
            _ = try await f.table().insert(["text": "queued"])
            spy.beforeEachWrite { _ in throw Self.full }
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByLocalStore)
            #expect(error.storeError == .diskFull)
            // What a person reads says the disk is full and what to do, not only that the push stopped.
            #expect(error.description.hasSuffix(" " + Self.full.description), "\(error)")
            #expect(try await f.operations().count == 1)
        }
    }
}
