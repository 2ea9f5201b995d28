import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// `sync-keys encrypt`: a plain store becomes an encrypted one by export + rename (C32, C33), and
/// a kill at any step loses nothing.
@Suite struct EncryptTests {
    static let steps: [KeyMaintenanceStep] = [
        .locked, .checkpointed, .attached, .exported, .synced, .verified, .sourceClosed, .envelopeWritten, .renamed,
        .sideFilesRemoved, .directorySynced, .plaintextRemoved,
    ]
    static let afterEnvelope: Set<KeyMaintenanceStep> = [.envelopeWritten, .renamed, .sideFilesRemoved, .directorySynced, .plaintextRemoved]

    /// A plain store with marker strings in every table, its last writes still in the WAL.
    static func plainStore(rows: Int) async throws -> (Fixture, StoreContent, [String]) {
        let fixture = Fixture(directory: StoreDirectory(try TemporaryDirectory(prefix: "sync-keys")), passphrase: makePassphrase())
        let store = try await SQLiteStore.open(at: fixture.database, encryption: .none, options: StoreOptions(createIfMissing: true))
        try await Workload.fill(store, rows: rows, operations: rows / 10)
        let markers = (0..<4).map { _ in "PLAINMARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "") }
        try await store.write { w in
            for (i, marker) in markers.enumerated() {
                try w.upsert(table: Workload.table, items: [["id": .string("marker-\(i)"), "text": .string(marker)]], ignoreMissingColumns: false)
                _ = try w.addOperation(kind: .insert, table: Workload.table, itemId: "marker-\(i)", item: ["text": .string(marker)])
            }
            try w.setConfigValue(markers[0], forKey: Workload.tokenKeys[1])
        }
        let content = try await Workload.content(of: store)
        let crashed = try Fixture.copy(of: fixture, files: ["store.db", "store.db-wal"])
        try await store.close()
        fixture.remove()
        return (crashed, content, markers)
    }

    /// The markers found in any file of the directory (raw bytes).
    static func plaintextHits(_ markers: [String], in fixture: Fixture) throws -> [String] {
        try fixture.files().flatMap { name, data in
            markers.filter { data.range(of: Data($0.utf8)) != nil }.map { "\(name): \($0)" }
        }
    }

    @Test func encryptReplacesThePlaintextAndItsSideFiles() async throws {
        let (fixture, content, markers) = try await Self.plainStore(rows: 2_000)
        defer { fixture.remove() }
        #expect(try !Self.plaintextHits(markers, in: fixture).isEmpty, "the markers are visible before")
        let result = try fixture.run("encrypt", ["--profile", "insecure-test"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(!SQLiteStore.isPlainDatabase(at: fixture.database))
        #expect(Set(try fixture.files().keys) == ["store.db", "store.db.keys", "store.db.lock"])
        #expect(try Self.plaintextHits(markers, in: fixture).isEmpty)
        let store = try await fixture.open()
        #expect(try await Workload.content(of: store) == content)
        try await store.close()
        let again = try fixture.run("encrypt", ["--profile", "insecure-test"])
        #expect(again.exitCode == 1 && again.stderr.contains("already encrypted"))
    }

    @Test func encryptRefusesAStoreThatIsOpen() async throws {
        let (fixture, _, _) = try await Self.plainStore(rows: 100)
        defer { fixture.remove() }
        let store = try await SQLiteStore.open(at: fixture.database, encryption: .none)
        let before = try fixture.files()
        let result = try fixture.run("encrypt", ["--profile", "insecure-test"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(try fixture.files() == before)
        try await store.close()
    }

    @Test func killedAtEveryStepTheMigrationResumesWithNothingLost() async throws {
        let (template, content, markers) = try await Self.plainStore(rows: 2_000)
        defer { template.remove() }
        for (index, step) in Self.steps.enumerated() {
            let fixture = try Fixture.copy(of: template)
            defer { fixture.remove() }
            let killed = try fixture.run("encrypt", ["--profile", "insecure-test"], environment: [FaultHook.variable: step.rawValue])
            #expect(killed.wasKilled, "\(step): \(killed)")
            if !Self.afterEnvelope.contains(step) {
                // Nothing changed but scratch files: the plain store opens as before.
                #expect(!FileManager.default.fileExists(atPath: fixture.envelope.path), "\(step)")
                let plain = try await SQLiteStore.open(at: fixture.database, encryption: .none)
                #expect(try await Workload.content(of: plain) == content, "\(step)")
                try await plain.close()
            } else if index.isMultiple(of: 2) {
                // The envelope is written: the passphrase opens the store, finishing the migration.
                let store = try await fixture.open()
                #expect(try await Workload.content(of: store) == content, "\(step)")
                try await store.close()
            }
            let resumed = try fixture.run("encrypt", ["--profile", "insecure-test"])
            let finishedByOpen = Self.afterEnvelope.contains(step) && index.isMultiple(of: 2)
            let alreadyDone = finishedByOpen || step == .plaintextRemoved
            #expect(resumed.exitCode == (alreadyDone ? 1 : 0), "\(step): \(resumed)")
            #expect(!SQLiteStore.isPlainDatabase(at: fixture.database), "\(step)")
            #expect(try Self.plaintextHits(markers, in: fixture).isEmpty, "\(step)")
            #expect(Set(try fixture.files().keys) == ["store.db", "store.db.keys", "store.db.lock"], "\(step)")
            let store = try await fixture.open()
            #expect(try await Workload.content(of: store) == content, "\(step): after the migration")
            try await store.close()
        }
    }
}
