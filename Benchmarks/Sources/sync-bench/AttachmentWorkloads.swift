import COpenSSL
import Foundation
import SyncClient
import SyncKeys
import SyncStore
import SyncWire

#if canImport(Glibc)
import Glibc
#endif

/// The attachment workloads that run in a child process of their own (so that each one's peak
/// resident set is its own): a large attachment written into and read out of a store, the
/// AES-256-GCM reference over the same file, and many attachments uploaded to and downloaded
/// from a server.
extension ChildWorkload {
    /// `attachment-write`: attaches the file `--source` to a new item of a fresh store, timed from
    /// the call to its return (read in 1 MiB pieces, sealed, hashed, flushed to the disk, its row
    /// committed). `items` is the content's size in bytes.
    func attachmentWrite(at url: URL, encryption: StoreEncryption) async throws -> ChildReport {
        guard let source else { throw BenchError("attachment-write needs --source") }
        return try await withStore(url, encryption, create: true) { _, table in
            let attached = try table(AttachmentContentBench.table)
            try await attached.insert(AttachmentContentBench.item(AttachmentContentBench.itemId))
            var size: Int64 = 0
            var report = try await measure(items: 0) {
                size = try await attached.attach(
                    .file(URL(fileURLWithPath: source)), to: AttachmentContentBench.itemId, name: "content.bin",
                    contentType: "application/octet-stream"
                ).size
            }
            report.items = 1
            report.bytes = Int(size)
            return report
        }
    }

    /// `attachment-read`: exports the one attachment of the store `attachment-write` made to the
    /// new file `--target` (read and checked 1 MiB at a time, written, flushed to the disk once),
    /// timed from the opening of its content to the export's return.
    func attachmentRead(at url: URL, encryption: StoreEncryption) async throws -> ChildReport {
        guard let target else { throw BenchError("attachment-read needs --target") }
        return try await withStore(url, encryption, create: false) { _, table in
            let attached = try table(AttachmentContentBench.table)
            guard let attachment = try await attached.attachments(of: AttachmentContentBench.itemId).first else {
                throw BenchError("the store holds no attachment to read")
            }
            var report = try await measure(items: 1) {
                try await attached.content(ofAttachment: attachment.id).export(to: URL(fileURLWithPath: target))
            }
            let written = try KeyToolBench.size(of: URL(fileURLWithPath: target))
            guard Int64(written) == attachment.size else { throw BenchError("the export wrote \(written) bytes of \(attachment.size)") }
            report.bytes = written
            return report
        }
    }

    /// `attachment-reference`: the file `--source` through OpenSSL's EVP AES-256-GCM, in this
    /// process, into the new file `--target` (with `--decrypt`, a file this workload encrypted,
    /// back to plaintext), `count` bytes at a time: read, encrypted, written; one tag at the end;
    /// the file flushed to the disk once.
    func attachmentReference() throws -> ChildReport {
        guard let source, let target else { throw BenchError("attachment-reference needs --source and --target") }
        let cpu = ProcessStatistics.ownCPUSeconds
        var bytes = 0
        let elapsed = try ContinuousClock().measure {
            bytes = try GCMReference.run(from: source, to: target, decrypt: decrypt, bufferSize: count)
        }
        return ChildReport(
            seconds: elapsed.seconds, items: 1, transferred: nil, cpuSeconds: ProcessStatistics.ownCPUSeconds - cpu,
            peakRSSBytes: ProcessStatistics.ownPeakResidentBytes, bytes: bytes)
    }

    /// `attachment-upload`: attaches `count` attachments of `--bytes` bytes each to one new item
    /// of a fresh store (not timed), then pushes: timed from the end of the rows' push
    /// (``SyncEvent/pushFinished(succeeded:failed:)``) to the push's return, which is when the
    /// uploads it runs have ended.
    func attachmentUpload(at url: URL, encryption: StoreEncryption) async throws -> ChildReport {
        guard let bytes else { throw BenchError("attachment-upload needs --bytes") }
        return try await withStore(url, encryption, create: true) { context, table in
            let attached = try table(AttachmentContentBench.table)
            let itemId = UUID().uuidString.lowercased()
            try await attached.insert(AttachmentContentBench.item(itemId))
            for i in 0..<count {
                try await attached.attach(
                    .bytes(AttachmentContentBench.content(i, bytes: bytes)), to: itemId, name: "photo-\(i).jpg", contentType: "image/jpeg")
            }
            let events = await context.events()
            let rowsPushed = Task { () -> (ContinuousClock.Instant, Double)? in
                for await event in events {
                    if case .pushFinished = event { return (ContinuousClock.now, ProcessStatistics.ownCPUSeconds) }
                }
                return nil
            }
            try await context.push()
            let (end, cpu) = (ContinuousClock.now, ProcessStatistics.ownCPUSeconds)
            guard let rowsEnd = await rowsPushed.value else { throw BenchError("the push reported no end of its rows") }
            let (start, startCPU) = rowsEnd
            let left = try await context.attachmentTransfers()
            guard left.isEmpty else { throw BenchError("\(left.count) uploads are still queued after the push") }
            return ChildReport(
                seconds: (end - start).seconds, items: count, transferred: nil, cpuSeconds: cpu - startCPU,
                peakRSSBytes: ProcessStatistics.ownPeakResidentBytes, bytes: count * bytes)
        }
    }

    /// `attachment-download`: pulls the attachment table's items and rows into a fresh store and
    /// queues a download of every attachment (not timed), then runs the transfers
    /// (``SyncContext/transferAttachments()``), timed; `count` downloads are expected.
    func attachmentDownload(at url: URL, encryption: StoreEncryption) async throws -> ChildReport {
        guard let bytes else { throw BenchError("attachment-download needs --bytes") }
        return try await withStore(url, encryption, create: true) { context, table in
            let attached = try table(AttachmentContentBench.table)
            _ = try await attached.pull(Query(), queryId: "bench-items")
            _ = try await table(attached.attachmentsTable).pull(Query(), queryId: "bench-attachments")
            let rows = try await table(attached.attachmentsTable).read(Query()).items
            for row in rows {
                guard let id = row[SystemProperty.id]?.stringValue else { continue }
                try await attached.requestDownload(ofAttachment: id)
            }
            var report = try await measure(items: count) {
                let summary = try await context.transferAttachments()
                guard summary.downloaded == count else { throw BenchError("\(summary.downloaded) downloads of \(count)") }
            }
            report.bytes = count * bytes
            return report
        }
    }

    /// `bare-attachments`: the content of `attachment-upload`, `count` × `--bytes`, sent and
    /// fetched over a bare socket (``BareSender``): an item and the `count` metadata rows are
    /// inserted first (not timed), then the contents are sent, one `PATCH` each (timed:
    /// `seconds`), then fetched, one `GET` each (timed: `downloadSeconds`).
    func bareAttachments() async throws -> ChildReport {
        #if canImport(Glibc)
        guard let server, let url = URL(string: server), let bytes else { throw BenchError("bare-attachments needs --server and --bytes") }
        var sender = try BareSender(server: url)
        defer { sender.close() }
        let table = AttachmentContentBench.table, companion = TableName.attachments(of: AttachmentContentBench.table)
        func send(_ request: [UInt8], expecting status: Int) throws -> [UInt8] {
            let answer = try sender.exchange(request)
            guard answer.status == status else { throw BenchError("the bare socket got \(answer.status), not \(status)") }
            return answer.body
        }
        let itemId = UUID().uuidString.lowercased()
        _ = try send(
            sender.request("POST", "/tables/\(table)", body: Array(try JSONCoding.encode(AttachmentContentBench.item(itemId)))), expecting: 201)
        var uploads: [[UInt8]] = [], downloads: [[UInt8]] = []
        for i in 0..<count {
            let id = UUID().uuidString.lowercased(), content = AttachmentContentBench.content(i, bytes: bytes)
            let digest = BenchBytes.hex(try KeyDerivation.sha256(content))
            let row: JSONObject = [
                SystemProperty.id: .string(id), "itemId": .string(itemId), "name": .string("photo-\(i).jpg"),
                "contentType": .string("image/jpeg"), "size": .int(Int64(bytes)), "sha256": .string(digest),
            ]
            _ = try send(sender.request("POST", "/tables/\(companion)", body: Array(try JSONCoding.encode(row))), expecting: 201)
            let path = "/tables/\(companion)/\(id)/content"
            uploads.append(
                sender.request(
                    "PATCH", path, body: content, contentType: "application/offset+octet-stream", headers: ["\(WireHeader.uploadOffset): 0"]))
            downloads.append(sender.request("GET", path))
        }
        var report = try await measure(items: count) {
            for request in uploads { _ = try send(request, expecting: 204) }
        }
        let started = ContinuousClock.now
        for request in downloads {
            let body = try send(request, expecting: 200)
            guard body.count == bytes else { throw BenchError("a download over the bare socket brought \(body.count) bytes") }
        }
        report.downloadSeconds = (ContinuousClock.now - started).seconds
        report.bytes = count * bytes
        return report
        #else
        throw BenchError("the bare sender uses Glibc's sockets: Linux only")
        #endif
    }
}

/// What the attachment workloads share: the table, the item of the large attachment, and the
/// content of the many small ones.
enum AttachmentContentBench {
    /// The table the attachments belong to.
    static let table = "benchAttach"
    /// The item the large attachment belongs to.
    static let itemId = "b3c1a77a-0000-4000-8000-000000000001"

    /// The item attachments belong to, with id `id`.
    static func item(_ id: String) -> JSONObject {
        [SystemProperty.id: .string(id), "text": .string("attachments")]
    }

    /// `bytes` bytes of content for attachment `index`: pseudo-random (incompressible), the same
    /// for an index in every run.
    static func content(_ index: Int, bytes: Int) -> [UInt8] {
        var state = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 | 1
        var content = [UInt8](repeating: 0, count: bytes)
        content.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                withUnsafeBytes(of: state.littleEndian) { word in
                    for i in 0..<min(8, raw.count - offset) { raw[offset + i] = word[i] }
                }
                offset += 8
            }
        }
        return content
    }

    /// Writes a new file of `bytes` bytes of content at `path`, 1 MiB at a time.
    static func writeSource(at path: String, bytes: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw BenchError("cannot create \(path)") }
        defer { try? handle.close() }
        var written = 0
        var piece = 0
        while written < bytes {
            let count = min(1 << 20, bytes - written)
            try handle.write(contentsOf: content(piece, bytes: count))
            written += count
            piece += 1
        }
        try handle.synchronize()
    }
}

/// The reference of the large attachment: one AES-256-GCM stream over a whole file through
/// OpenSSL's EVP interface (a random key and nonce, the 16-byte tag after the ciphertext).
enum GCMReference {
    /// Encrypts (or decrypts) the file at `source` into the new file at `target`, `bufferSize`
    /// bytes at a time, then flushes `target` to the disk.
    /// - Returns: The plaintext bytes.
    static func run(from source: String, to target: String, decrypt: Bool, bufferSize: Int) throws -> Int {
        let key = BenchBytes.random(32), nonce = BenchBytes.random(12)
        guard let context = EVP_CIPHER_CTX_new() else { throw BenchError("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        // The decryption uses the key and nonce the encryption wrote at the start of its file.
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw BenchError("cannot open \(source)") }
        defer { close(input) }
        let size = try fileSize(input)
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard output >= 0 else { throw BenchError("cannot create \(target)") }
        defer { close(output) }
        var header = key + nonce
        if decrypt {
            guard read(input, &header, header.count) == header.count else { throw BenchError("\(source) is too short") }
        } else {
            try writeAll(output, header, header.count)
        }
        var total = Int(size) - (decrypt ? header.count + 16 : 0)
        guard total >= 0 else { throw BenchError("\(source) is too short") }
        let plain = total
        guard EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, header, Array(header[32...]), decrypt ? 0 : 1) == 1 else {
            throw BenchError("EVP_CipherInit_ex failed")
        }
        var inBuffer = [UInt8](repeating: 0, count: bufferSize), outBuffer = [UInt8](repeating: 0, count: bufferSize + 16)
        while total > 0 {
            let n = read(input, &inBuffer, min(bufferSize, total))
            guard n > 0 else { throw BenchError("read of \(source) failed") }
            var produced: Int32 = 0
            guard EVP_CipherUpdate(context, &outBuffer, &produced, inBuffer, Int32(n)) == 1 else { throw BenchError("EVP_CipherUpdate failed") }
            try writeAll(output, outBuffer, Int(produced))
            total -= n
        }
        var tag = [UInt8](repeating: 0, count: 16)
        if decrypt {
            guard read(input, &tag, 16) == 16, EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &tag) == 1 else {
                throw BenchError("no tag at the end of \(source)")
            }
        }
        var final: Int32 = 0
        guard EVP_CipherFinal_ex(context, &outBuffer, &final) == 1 else { throw BenchError("the GCM tag does not match") }
        if !decrypt {
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else { throw BenchError("no GCM tag") }
            try writeAll(output, tag, 16)
        }
        guard fsync(output) == 0 else { throw BenchError("fsync of \(target) failed") }
        return plain
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], _ count: Int) throws {
        var done = 0
        while done < count {
            let n = bytes[done..<count].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError("write failed: errno \(errno)") }
            done += n
        }
    }

    /// The size of the file open at `descriptor`, read from its start afterwards.
    private static func fileSize(_ descriptor: Int32) throws -> Int64 {
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0, lseek(descriptor, 0, SEEK_SET) == 0 else { throw BenchError("lseek failed: errno \(errno)") }
        return Int64(end)
    }
}
