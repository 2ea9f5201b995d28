import CFaultVFS
import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A directory whose store files run over the fault VFS (Tests/CFaultVFS): syncs that fail, and
/// power cuts that drop every byte not synced yet. Unwatched (and removed) by ``end()``.
struct FaultyDirectory {
    let test: TestStore
    /// The watched prefix: the directory's path and a slash.
    let prefix: String

    /// A closed store of `kind` with `rows` items, every byte of it on the disk, whose files the
    /// VFS watches from now on.
    static func make(_ kind: StoreKind, rows: Int = 1) async throws -> FaultyDirectory {
        #expect(fault_vfs_register() == 0)
        let (test, store) = try await TestStore.make(kind)
        try await store.upsert(table: "todo", items: (0..<rows).map { ["id": .string("base-\($0)"), "text": "kept"] })
        try await store.close()
        let prefix = test.directory.url.path + "/"
        fault_vfs_watch(prefix)
        return FaultyDirectory(test: test, prefix: prefix)
    }

    func end() {
        fault_vfs_unwatch(prefix)
        test.directory.remove()
    }
}

/// A local write that returned is on the disk: each commit waits for its write-ahead log to be
/// synced, and a failed sync fails the write.
@Suite struct StoreDurabilityTests {
    /// One write of the offline path: the row and its queued operation, in one transaction.
    static func addOffline(_ store: SQLiteStore, id: String) async throws {
        try await store.write { writer in
            let item: JSONObject = ["id": .string(id), "text": .string("written \(id)")]
            try writer.upsert(table: "todo", items: [item], ignoreMissingColumns: false)
            _ = try writer.addOperation(kind: .insert, table: "todo", itemId: id, item: item)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aWriteWhoseLogSyncFailsThrowsAndIsRolledBack(_ kind: StoreKind) async throws {
        let faulty = try await FaultyDirectory.make(kind)
        defer { faulty.end() }
        let store = try await faulty.test.open()
        // A first commit starts the log (SQLite syncs a new log's header in any mode); the failing
        // sync is the one of a later commit.
        try await Self.addOffline(store, id: "first")
        fault_vfs_fail_syncs(faulty.prefix, 1)
        await #expect(throws: StoreError.ioError) { try await Self.addOffline(store, id: "lost") }
        fault_vfs_fail_syncs(faulty.prefix, 0)
        // Nothing of the failed write is visible, and the store goes on working.
        #expect(try await store.lookup(table: "todo", id: "lost") == nil)
        #expect(try await store.read { try $0.operationCount(table: nil) } == 1)
        try await Self.addOffline(store, id: "next")
        try await store.close()

        let reopened = try await faulty.test.open()
        #expect(try await reopened.lookup(table: "todo", id: "lost") == nil)
        #expect(try await reopened.lookup(table: "todo", id: "next") != nil)
        try await reopened.close()
    }

    @Test(arguments: StoreKind.allCases)
    func everyCommitSyncsTheLog(_ kind: StoreKind) async throws {
        let faulty = try await FaultyDirectory.make(kind)
        defer { faulty.end() }
        let store = try await faulty.test.open()
        let before = fault_vfs_sync_count(faulty.prefix)
        for i in 0..<5 { try await Self.addOffline(store, id: "item-\(i)") }
        #expect(fault_vfs_sync_count(faulty.prefix) - before >= 5)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aCloseWhoseCheckpointCannotSyncThrows(_ kind: StoreKind) async throws {
        let faulty = try await FaultyDirectory.make(kind)
        defer { faulty.end() }
        let store = try await faulty.test.open()
        try await Self.addOffline(store, id: "acknowledged")
        fault_vfs_fail_syncs(faulty.prefix, 1)
        await #expect(throws: StoreError.ioError) { try await store.close() }
        #expect(await store.isClosed)
        fault_vfs_fail_syncs(faulty.prefix, 0)
        // The write was synced when it returned: the log still holds it, and the next open replays it.
        let reopened = try await faulty.test.open()
        #expect(try await reopened.lookup(table: "todo", id: "acknowledged") != nil)
        #expect(try await reopened.read { try $0.operationCount(table: nil) } == 1)
        try await reopened.close()
    }
}

/// A simulated power cut (every byte written since its file's last sync is dropped, and the
/// process that wrote it is gone) loses no write that had returned.
@Suite struct StorePowerCutTests {
    @Test(arguments: StoreKind.allCases)
    func noAcknowledgedWriteIsLost(_ kind: StoreKind) async throws {
        let faulty = try await FaultyDirectory.make(kind, rows: 20)
        defer { faulty.end() }
        let store = try await faulty.test.open()
        let ids = (0..<30).map { "offline-\($0)" }
        for id in ids { try await StoreDurabilityTests.addOffline(store, id: id) }
        // A pulled page: 50 items in one commit.
        let page: [JSONObject] = (0..<50).map { ["id": .string("pulled-\($0)"), "text": "from the server"] }
        try await store.upsert(table: "todo", items: page)

        #expect(fault_vfs_power_cut(faulty.prefix) > 0)
        // The cut-off process: whatever it still writes or deletes is lost with the power.
        try? await store.close()
        fault_vfs_unwatch(faulty.prefix)

        let reopened = try await faulty.test.open()
        let rows = try await reopened.read(QueryDescription(table: "todo")).items.compactMap { $0["id"]?.stringValue }
        #expect(Set(rows) == Set((0..<20).map { "base-\($0)" } + ids + page.compactMap { $0["id"]?.stringValue }))
        #expect(try await reopened.read { try $0.operationCount(table: nil) } == ids.count)
        #expect(try await reopened.checkIntegrity().isEmpty)
        try await reopened.close()
    }
}
