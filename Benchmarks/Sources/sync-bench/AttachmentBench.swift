import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncWire

/// `sync-bench --attachments`: the attachment workloads, each beside its reference measured in
/// the same run, every client in a child process of its own, on encrypted stores.
struct AttachmentBench {
    let bench: BenchOptions
    let scratch: Scratch
    /// The data key of the stores of the content and transfer workloads (handed to children on stdin).
    let key: SecretBytes

    init(bench: BenchOptions, scratch: Scratch) throws {
        self.bench = bench
        self.scratch = scratch
        key = try SecretBytes.random(count: 32)
    }

    /// The buffer of the reference: the pieces an attachment is read in and exported in (1 MiB).
    static let referenceBuffer = 1 << 20

    /// Runs every attachment workload.
    func measure() async throws -> [BenchRecord] {
        try await content() + transfers() + rotation()
    }

    /// A file of `--attachment-megabytes` MB attached to and exported from a fresh encrypted
    /// store, each run followed by the reference over the same file.
    private func content() async throws -> [BenchRecord] {
        let bytes = bench.attachmentMegabytes * 1_000_000
        let source = scratch.path("attachment-source.bin")
        bench.progress("writing a \(bench.attachmentMegabytes) MB file")
        try AttachmentContentBench.writeSource(at: source, bytes: bytes)
        defer { try? FileManager.default.removeItem(atPath: source) }
        var write: [BenchSample] = [], read: [BenchSample] = [], encrypt: [BenchSample] = [], decrypt: [BenchSample] = []
        for run in 0..<bench.runs {
            let store = scratch.path("attachment-\(run).db"), exported = scratch.path("attachment-export.bin")
            let sealed = scratch.path("attachment-reference.gcm"), opened = scratch.path("attachment-reference.bin")
            defer {
                for path in [exported, sealed, opened] { try? FileManager.default.removeItem(atPath: path) }
                Self.removeStore(at: store)
            }
            let of = "run \(run + 1) of \(bench.runs)"
            bench.progress("attachment of \(bench.attachmentMegabytes) MB written into the encrypted store, \(of)")
            write.append(try await child(.attachmentWrite, store: store, ["--source", source], count: 0))
            bench.progress("the same file encrypted by OpenSSL's AES-256-GCM, \(of)")
            encrypt.append(try await child(.attachmentReference, store: nil, ["--source", source, "--target", sealed], count: Self.referenceBuffer))
            bench.progress("attachment of \(bench.attachmentMegabytes) MB read out of the encrypted store, \(of)")
            read.append(try await child(.attachmentRead, store: store, ["--target", exported], count: 0))
            bench.progress("the same file decrypted by OpenSSL's AES-256-GCM, \(of)")
            decrypt.append(
                try await child(.attachmentReference, store: nil, ["--source", sealed, "--target", opened, "--decrypt"], count: Self.referenceBuffer))
        }
        let mb = bench.attachmentMegabytes, encrypted = "encrypted"
        return Self.rates([
            ("attachment-write", "\(mb) MB attached (file → store)", encrypted, write),
            ("attachment-encrypt-reference", "reference: AES-256-GCM (OpenSSL EVP), file → file", nil, encrypt),
            ("attachment-read", "\(mb) MB exported (store → file)", encrypted, read),
            ("attachment-decrypt-reference", "reference: AES-256-GCM (OpenSSL EVP) decrypted, file → file", nil, decrypt),
        ])
    }

    /// The records in MB/s of `(workload, title, store, samples)`.
    static func rates(_ measured: [(String, String, String?, [BenchSample])]) -> [BenchRecord] {
        measured.map { BenchRecord(workload: $0.0, title: $0.1, store: $0.2, unit: "MB/s", samples: $0.3) }
    }

    /// `--attachment-files` attachments uploaded by a push and downloaded into another store, then
    /// the same content sent and fetched over a bare socket, against a fresh `sync-server` (an
    /// SQLite file, its content in the directory beside it) for each run.
    private func transfers() async throws -> [BenchRecord] {
        let files = bench.attachmentFiles, bytes = bench.attachmentKilobytes * 1_000
        var uploads: [BenchSample] = [], downloads: [BenchSample] = [], bareUploads: [BenchSample] = [], bareDownloads: [BenchSample] = []
        for run in 0..<bench.runs {
            let database = scratch.path("attachments-server-\(run).sqlite")
            let server = try BenchServer(
                tool: try BenchTools.locate("sync-server"), database: "sqlite:\(database)", pageSize: nil)
            defer {
                server.stop()
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: database + suffix) }
                try? FileManager.default.removeItem(atPath: database + ".attachments")
            }
            let of = "run \(run + 1) of \(bench.runs)"
            let arguments = ["--server", server.url.absoluteString, "--bytes", String(bytes)]
            let sender = scratch.path("upload-\(run).db"), receiver = scratch.path("download-\(run).db")
            defer { for path in [sender, receiver] { Self.removeStore(at: path) } }
            bench.progress("upload of \(files) attachments of \(bench.attachmentKilobytes) KB, \(of)")
            uploads.append(try await child(.attachmentUpload, store: sender, arguments, count: files))
            bench.progress("download of \(files) attachments of \(bench.attachmentKilobytes) KB, \(of)")
            downloads.append(try await child(.attachmentDownload, store: receiver, arguments, count: files))
            bench.progress("the same content over a bare socket, \(of)")
            let bare = try await child(.bareAttachments, store: nil, arguments, count: files)
            bareUploads.append(bare)
            var download = bare
            download.seconds = bare.downloadSeconds ?? 0
            download.clientCPUSeconds = nil
            bareDownloads.append(download)
        }
        let what = "\(files) × \(bench.attachmentKilobytes) KB"
        return Self.rates([
            ("attachment-upload", "\(what) uploaded by a push", "encrypted", uploads),
            ("bare-attachment-upload", "reference: \(what) PATCHed from a bare socket", nil, bareUploads),
            ("attachment-download", "\(what) downloaded", "encrypted", downloads),
            ("bare-attachment-download", "reference: \(what) fetched by a bare socket", nil, bareDownloads),
        ])
    }

    /// The goals' lines from the records of ``measure()``.
    static func lines(_ records: [BenchRecord], bench: BenchOptions) throws -> [HeadlineLine] {
        func record(_ workload: String) throws -> BenchRecord {
            guard let found = records.first(where: { $0.workload == workload }) else { throw BenchError("no \(workload) record") }
            return found
        }
        func line(
            _ figure: String, _ measured: BenchRecord, _ reference: String, _ base: BenchRecord, goal: Double?, atLeast: Bool = true
        ) -> HeadlineLine {
            let ratio = measured.rate / max(base.rate, 1e-9)
            return HeadlineLine(
                figure: figure, value: measured.rate, unit: measured.unit, reference: reference, referenceValue: base.rate,
                referenceUnit: base.unit, ratio: ratio, goal: goal, atLeast: atLeast, met: goal.map { ratio >= $0 })
        }
        let mb = bench.attachmentMegabytes, files = bench.attachmentFiles, kb = bench.attachmentKilobytes
        let gcm = "AES-256-GCM through OpenSSL EVP in-process, same file, 1 MiB buffer"
        let write = try record("attachment-write"), read = try record("attachment-read")
        var lines = [
            line(
                "attachment of \(mb) MB written into the encrypted store", write, "\(gcm) (read, encrypt, write, fsync once)",
                try record("attachment-encrypt-reference"), goal: 0.8),
            line(
                "attachment of \(mb) MB read out of the encrypted store", read, "\(gcm) (read, decrypt, write, fsync once)",
                try record("attachment-decrypt-reference"), goal: 0.8),
        ]
        let peaks = [write.peakRSSBytes, read.peakRSSBytes].compactMap { $0 }
        let peak = Double(peaks.max() ?? 0) / 1_000_000
        lines.append(
            HeadlineLine(
                figure: "client peak RSS writing and reading the \(mb) MB attachment", value: peak, unit: "MB", reference: nil, referenceValue: nil,
                referenceUnit: nil, ratio: nil, goal: 64, atLeast: false, met: peaks.count == 2 && peak <= 64))
        lines.append(
            line(
                "upload of \(files) × \(kb) KB attachments to sync-server", try record("attachment-upload"),
                "the same content PATCHed from a bare socket",
                try record("bare-attachment-upload"), goal: nil))
        lines.append(
            line(
                "download of \(files) × \(kb) KB attachments from sync-server", try record("attachment-download"),
                "the same content fetched by a bare socket", try record("bare-attachment-download"), goal: nil))
        let rotate = try record("attachment-rotate"), plain = try record("rotate-without-attachments")
        let ratio = rotate.seconds / max(plain.seconds, 1e-9)
        lines.append(
            HeadlineLine(
                figure: "sync-keys rotate of a store holding \(bench.attachmentStoreMegabytes) MB of attachments: seconds", value: rotate.seconds,
                unit: "s", reference: "the same store's rotate without them", referenceValue: plain.seconds, referenceUnit: "s", ratio: ratio,
                goal: 1.5, atLeast: false, met: ratio <= 1.5))
        return lines
    }

    /// Runs one attachment workload in a child process.
    private func child(
        _ workload: ClientWorkload, store: String?, _ extra: [String], count: Int
    ) async throws -> BenchSample {
        var arguments = ["child-workload", workload.rawValue, "--store", store ?? scratch.path("unused.db"), "--count", String(count)] + extra
        if store != nil { arguments.append("--encrypted") }
        var input = store != nil ? KeyHandOver.text(of: key) : []
        defer { for i in input.indices { input[i] = 0 } }
        let output = try await ChildRunner.run(BenchTools.ownExecutable, arguments, input: input, in: scratch)
        return BenchSample(try JSONDecoder().decode(ChildReport.self, from: output))
    }

    /// Removes a store, its side files and its attachment directory.
    static func removeStore(at path: String) {
        KeyToolBench.removeStore(at: URL(fileURLWithPath: path))
        try? FileManager.default.removeItem(atPath: path + ".attachments")
    }
}
