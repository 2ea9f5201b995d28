import Foundation
import SyncKeys
import SyncSQLite
@_spi(Testing) import SyncStore
import SyncTestSupport
import Testing

/// Kill -9 during `sync-keys rotate`, at every step boundary and at random points of the copy,
/// on a store of tens of thousands of rows with a queue, errors, delta tokens and un-checkpointed
/// WAL frames. After each kill the store opens with the passphrase with exactly the same content
/// and queue; the next open or the next rotate completes or rolls back; afterwards the old data key
/// opens nothing.
@Suite struct RotationFaultTests {
    /// The steps of a rotation, in order (the test hook kills right after each is reported).
    static let steps: [KeyMaintenanceStep] = [
        .locked, .envelopeRotating, .checkpointed, .attached, .exported, .synced, .verified, .sourceClosed,
        .renamed, .sideFilesRemoved, .directorySynced, .envelopeActive,
    ]
    /// Steps after which the database already has the new key.
    static let committed: Set<KeyMaintenanceStep> = [.renamed, .sideFilesRemoved, .directorySynced, .envelopeActive]

    /// A store as an app killed mid-session leaves it: filled, then a last batch of writes still in
    /// the WAL. Returns the copy of its files and the content every recovery must reproduce.
    static func crashedStore(rows: Int = 20_000, operations: Int = 2_000) async throws -> (Fixture, StoreContent) {
        let live = try Fixture.create()
        defer { live.remove() }
        let store = try await live.open()
        try await Workload.fill(store, rows: rows, operations: operations)
        try await store.upsert(table: Workload.table, items: (0..<300).map { Workload.item($0 * 7, seed: 9) })
        try await store.write { w in
            for i in 0..<40 { _ = try w.addOperation(kind: .update, table: Workload.table, itemId: "late-\(i)", item: nil) }
            try w.setConfigValue("2026-11-22T23:59:59.999Z", forKey: Workload.tokenKeys[0])
        }
        let content = try await Workload.content(of: store)
        let wal = try #require(try FileManager.default.attributesOfItem(atPath: live.database.path + "-wal")[.size] as? Int)
        #expect(wal > 0, "the last writes are still in the WAL")
        let crashed = try Fixture.copy(of: live, files: ["store.db", "store.db-wal", "store.db.keys"])
        try await store.close()
        return (crashed, content)
    }

    @Test func killedAtEveryStepBoundaryTheStoreKeepsEverything() async throws {
        let (template, content) = try await Self.crashedStore()
        defer { template.remove() }
        let oldKeyId = try KeyEnvelope.read(from: template.envelope).keyId
        for (index, step) in Self.steps.enumerated() {
            let fixture = try Fixture.copy(of: template)
            defer { fixture.remove() }
            let oldKey = try fixture.keys().dataKey
            let killed = try fixture.run("rotate", environment: [FaultHook.variable: step.rawValue])
            #expect(killed.wasKilled, "\(step): \(killed)")

            // Status needs no passphrase and tells the technician a rotation was interrupted.
            let status = try fixture.run("status", ["--json"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
            let interrupted = step != .locked && step != .envelopeActive
            #expect(try JSONDecoder().decode(StoreKeyStatus.self, from: Data(status.stdout.utf8)).rotationInterrupted == interrupted, "\(step)")
            let pendingKeyId = try KeyEnvelope.read(from: fixture.envelope).pendingKeyId

            // Alternate the two ways back: opening the store, or running rotate again.
            if index.isMultiple(of: 2) {
                let store = try await fixture.open()
                #expect(try await Workload.content(of: store) == content, "\(step): content after open")
                try await store.close()
                let envelope = try KeyEnvelope.read(from: fixture.envelope)
                #expect(envelope.state == .active, "\(step)")
                let expected = Self.committed.contains(step) ? (pendingKeyId ?? envelope.keyId) : oldKeyId
                #expect(envelope.keyId == expected, "\(step): completed or rolled back")
                if !Self.committed.contains(step) {
                    let again = try fixture.run("rotate")
                    #expect(again.exitCode == 0, "\(step): \(again)")
                }
            } else {
                let again = try fixture.run("rotate")
                #expect(again.exitCode == 0, "\(step): \(again)")
            }
            try await Self.expectRotated(fixture, from: oldKey, content: content, "\(step)")
        }
    }

    @Test func killedAtRandomPointsOfTheCopyTheStoreKeepsEverything() async throws {
        let (template, content) = try await Self.crashedStore()
        defer { template.remove() }
        var generator = SystemRandomNumberGenerator()
        let points = (1...7).shuffled(using: &generator).prefix(4).sorted()
        for point in points {
            let fixture = try Fixture.copy(of: template)
            defer { fixture.remove() }
            let oldKey = try fixture.keys().dataKey
            let killed = try fixture.run("rotate", environment: [FaultHook.variable: "progress:\(point)"])
            #expect(killed.wasKilled, "progress \(point): \(killed)")
            #expect(StoreFiles.scratchExists(beside: fixture.database), "progress \(point): a partial copy is left")

            let store = try await fixture.open()
            #expect(try await Workload.content(of: store) == content, "progress \(point)")
            try await store.close()
            #expect(!StoreFiles.scratchExists(beside: fixture.database), "progress \(point): the partial copy is removed")
            #expect(try fixture.keys().dataKey == oldKey, "progress \(point): rolled back")
            let again = try fixture.run("rotate")
            #expect(again.exitCode == 0, "progress \(point): \(again)")
            try await Self.expectRotated(fixture, from: oldKey, content: content, "progress \(point)")
        }
    }

    /// After a completed rotation: same content, `integrity_check` ok, the old key opens no file,
    /// and only the store's own files remain.
    static func expectRotated(_ fixture: Fixture, from oldKey: SecretBytes, content: StoreContent, _ label: String) async throws {
        #expect(try fixture.keys().dataKey != oldKey, "\(label)")
        #expect(try fixture.fileOpened(by: oldKey) == nil, "\(label): the old data key opens nothing")
        let store = try await fixture.open()
        #expect(try await Workload.content(of: store) == content, "\(label): content after rotation")
        #expect(try await store.withConnection { try $0.integrityCheck() } == ["ok"], "\(label)")
        try await store.close()
        #expect(Set(try fixture.files().keys) == ["store.db", "store.db.keys", "store.db.lock"], "\(label)")
    }
}

/// The CLI's test hook (see `FaultInjection` in SyncCLI).
enum FaultHook {
    static let variable = "CIPHERSYNC_FAULT_STEP"
}

extension StoreFiles {
    /// Whether the scratch file of an interrupted re-encryption lies beside `database`.
    static func scratchExists(beside database: URL) -> Bool {
        FileManager.default.fileExists(atPath: database.path + ".reencrypt")
    }
}

/// Names the test uses for files the tool writes beside a store.
enum StoreFiles {}
