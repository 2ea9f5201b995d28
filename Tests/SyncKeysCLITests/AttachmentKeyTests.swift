import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Attachments of a store as the SDK writes them: each file through the vault, its row and its
/// metadata in one transaction. Returns the content of each, by attachment id.
func addAttachments(to store: SQLiteStore, count: Int, size: Int, marker: String = "") async throws -> [String: [UInt8]] {
    var contents: [String: [UInt8]] = [:]
    var generator = SystemRandomNumberGenerator()
    for i in 0..<count {
        let id = "att-\(i)"
        let content = Array(marker.utf8) + (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) } + Array(marker.utf8)
        var handed = false
        let staged = try store.attachmentVault.write(table: "notes", id: id) {
            defer { handed = true }
            return handed ? nil : content
        }
        try await store.writeAttachments { writer, rows in
            try rows.insert(staged)
            try writer.upsert(
                table: "notes__attachments", items: [["id": .string(id), "itemId": "n", "name": .string("\(marker)-\(i).jpg")]],
                ignoreMissingColumns: false)
        }
        store.attachmentVault.settle(staged, committed: true)
        contents[id] = content
    }
    return contents
}

/// The named check of `sync-keys verify --json`.
func verifyCheck(_ fixture: Fixture, _ name: String) throws -> StoreVerificationReport.Check? {
    let result = try fixture.run("verify", ["--json"])
    return try JSONDecoder().decode(StoreVerificationReport.self, from: Data(result.stdout.utf8)).checks.first { $0.name == name }
}

/// Reads every attachment of `notes` back through the store.
func readAttachments(of store: SQLiteStore) async throws -> [String: [UInt8]] {
    let records = try await store.readAttachments { _, rows in try rows.records(table: "notes") }
    var contents: [String: [UInt8]] = [:]
    for record in records {
        let file = try store.attachmentVault.open(record)
        contents[record.id] = try file.read(at: 0, count: Int(file.contentLength) + 1)
    }
    return contents
}

/// `sync-keys rotate` rewraps the attachment keys inside its crash-safe rotation (a kill -9 at
/// any step loses no attachment), `verify` checks every attachment file's tag chain, and
/// `encrypt` seals a plain store's attachment files.
@Suite struct AttachmentKeyTests {
    @Test func killedAtEveryStepOfARotationEveryAttachmentStillDecrypts() async throws {
        let template = try Fixture.create()
        defer { template.remove() }
        let store = try await template.open()
        let contents = try await addAttachments(to: store, count: 3, size: 70_000)
        let records = try await store.readAttachments { _, rows in try rows.records() }
        try await store.close()
        for (index, step) in RotationFaultTests.steps.enumerated() {
            let fixture = try Fixture.copy(of: template)
            defer { fixture.remove() }
            let oldKey = try fixture.keys().dataKey
            let killed = try fixture.run("rotate", environment: [FaultHook.variable: step.rawValue])
            #expect(killed.wasKilled, "\(step): \(killed)")
            if index.isMultiple(of: 2) {
                let store = try await fixture.open()
                #expect(try await readAttachments(of: store) == contents, "\(step): after open")
                try await store.close()
            }
            if try fixture.keys().dataKey == oldKey {
                let again = try fixture.run("rotate")
                #expect(again.exitCode == 0, "\(step): \(again)")
            }
            #expect(try fixture.keys().dataKey != oldKey, "\(step)")
            let store = try await fixture.open()
            #expect(try await readAttachments(of: store) == contents, "\(step): after the rotation")
            let rewrapped = try await store.readAttachments { _, rows in try rows.records() }
            try await store.close()
            // Only the wrapped keys changed: the files are the same files.
            #expect(rewrapped.map(\.file) == records.map(\.file) && rewrapped.map(\.wrappedKey) != records.map(\.wrappedKey), "\(step)")
            let verify = try verifyCheck(fixture, "attachments")
            #expect(verify?.passed == true && verify?.detail.hasPrefix("3 attachment file(s)") == true, "\(step): \(String(describing: verify))")
        }
    }

    @Test func verifyChecksEveryAttachmentFile() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        _ = try await addAttachments(to: store, count: 2, size: 140_000)
        let records = try await store.readAttachments { _, rows in try rows.records() }
        try await store.close()
        let passed = try verifyCheck(fixture, "attachments")
        #expect(passed?.passed == true && passed?.detail.hasPrefix("2 attachment file(s)") == true)
        #expect(try verifyCheck(fixture, "file-modes")?.passed == true)
        #expect(try verifyCheck(fixture, "stray-files")?.passed == true)

        // A flipped byte in the middle segment of one file fails the check, named.
        let url = store.attachmentVault.directory.appendingPathComponent(records[1].file)
        var bytes = try [UInt8](Data(contentsOf: url))
        bytes[16 + 65_552 + 100] ^= 0x20
        try Data(bytes).write(to: url)
        let failed = try fixture.run("verify", ["--json"])
        #expect(failed.exitCode == 1, "\(failed)")
        let check = try verifyCheck(fixture, "attachments")
        #expect(check?.passed == false && check?.detail.hasPrefix("attachment att-1 of notes: Segment 1 of the attachment file was modified") == true)
    }

    @Test func encryptSealsThePlainAttachments() async throws {
        let fixture = Fixture(directory: StoreDirectory(try TemporaryDirectory(prefix: "sync-keys")), passphrase: makePassphrase())
        defer { fixture.remove() }
        let plain = try await SQLiteStore.open(at: fixture.database, encryption: .none, options: StoreOptions(createIfMissing: true))
        let marker = "ATTMARK" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let contents = try await addAttachments(to: plain, count: 2, size: 5_000, marker: marker)
        try await plain.close()
        let directory = plain.attachmentVault.directory
        #expect(try markerHits([marker], in: try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)).count == 2)

        let result = try fixture.run("encrypt", ["--profile", "insecure-test"])
        #expect(result.exitCode == 0, "\(result)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count == 2 && names.allSatisfy { $0.hasSuffix(".csat") }, "\(names)")
        let everything = [fixture.database, fixture.envelope] + names.map { directory.appendingPathComponent($0) }
        #expect(try markerHits([marker], in: everything) == [])
        let store = try await fixture.open()
        #expect(try await readAttachments(of: store) == contents)
        try await store.close()
        #expect(try verifyCheck(fixture, "attachments")?.passed == true)
    }
}
