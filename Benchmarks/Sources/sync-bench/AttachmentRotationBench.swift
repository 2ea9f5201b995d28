import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncWire

extension AttachmentBench {
    /// `sync-keys rotate` of one encrypted store (made by `sync-keys encrypt` from a small plain
    /// store, with one item), `--runs` times before and `--runs` times after
    /// `--attachment-store-megabytes` MB of attachments of 1 MB each were added to it: a rotation
    /// re-wraps the attachment keys and leaves the files as they are.
    func rotation() async throws -> [BenchRecord] {
        let tool = try BenchTools.locate("sync-keys")
        let keys = KeyToolBench(megabytes: 1, runs: bench.runs, scratch: scratch)
        let passphrase = scratch.path("attachment-passphrase")
        var secret = KeyHandOver.text(of: SecretBytes(BenchBytes.random(24)))
        defer { for i in secret.indices { secret[i] = 0 } }
        guard FileManager.default.createFile(atPath: passphrase, contents: Data(secret), attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(passphrase)")
        }
        let store = URL(fileURLWithPath: scratch.path("attachment-rotate.db"))
        defer {
            Self.removeStore(at: store.path)
            try? FileManager.default.removeItem(atPath: passphrase)
        }
        bench.progress("building the store that sync-keys rotates")
        _ = try await KeyToolBench.fillPlainStore(at: store, megabytes: 1)
        _ = try await keys.runTool(tool, ["encrypt", "--store", store.path, "--passphrase-file", passphrase])
        func withStore(_ body: (SyncTable) async throws -> Void) async throws {
            let phrase = try Passphrase.normalized(SecretBytes(Array(secret.prefix { $0 != 0x0A })))
            let key = try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: store)).unlock(passphrase: phrase)
            let opened = try await SQLiteStore.open(at: store, encryption: .key(key), options: StoreOptions(createIfMissing: false))
            do {
                let context = SyncContext(client: MobileServiceClient(url: URL(fileURLWithPath: "/")), store: opened)
                try await body(try context.syncTable(AttachmentContentBench.table))
                try await opened.close()
            } catch {
                try? await opened.close()
                throw error
            }
        }
        try await withStore { _ = try await $0.insert(AttachmentContentBench.item(AttachmentContentBench.itemId)) }
        func rotations(_ what: String) async throws -> [BenchSample] {
            var samples: [BenchSample] = []
            for run in 0..<bench.runs {
                bench.progress("sync-keys rotate, \(what), run \(run + 1) of \(bench.runs)")
                let bytes = try Self.bytes(of: store)
                let report = try await keys.runTool(tool, ["rotate", "--store", store.path, "--passphrase-file", passphrase])
                var sample = BenchSample(seconds: report.seconds, items: 1)
                sample.megabytes = Double(bytes) / 1_000_000
                sample.peakRSSBytes = report.peakRSSBytes > report.launcherRSSBytes ? report.peakRSSBytes : nil
                samples.append(sample)
            }
            return samples
        }
        let without = try await rotations("no attachments")
        let count = bench.attachmentStoreMegabytes
        bench.progress("attaching \(count) attachments of 1 MB")
        try await withStore { table in
            for i in 0..<count {
                try await table.attach(
                    .bytes(AttachmentContentBench.content(i, bytes: 1_000_000)), to: AttachmentContentBench.itemId, name: "scan-\(i).pdf",
                    contentType: "application/pdf")
            }
        }
        let with = try await rotations("\(count) MB of attachments")
        // Every attachment still opens under the rotated key, and reads back as it was written.
        try await withStore { table in
            let attachments = try await table.attachments(of: AttachmentContentBench.itemId)
            guard attachments.count == count, let last = attachments.first(where: { $0.name == "scan-\(count - 1).pdf" }) else {
                throw BenchError("the rotated store holds \(attachments.count) attachments, not \(count)")
            }
            let content = try await table.content(ofAttachment: last.id)
            guard try await content.read(at: 0, count: 1_000_000) == AttachmentContentBench.content(count - 1, bytes: 1_000_000) else {
                throw BenchError("an attachment reads back otherwise after the rotations")
            }
        }
        return Self.rates([
            ("attachment-rotate", "sync-keys rotate, \(count) MB of attachments", "encrypted", with),
            ("rotate-without-attachments", "reference: the same store's rotate before they were added", "encrypted", without),
        ])
    }

    /// The bytes of a store: its database and its attachment files.
    static func bytes(of store: URL) throws -> Int {
        let directory = store.path + ".attachments"
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return try KeyToolBench.size(of: store)
            + files.reduce(0) { $0 + ((try? KeyToolBench.size(of: URL(fileURLWithPath: directory + "/" + $1))) ?? 0) }
    }
}
