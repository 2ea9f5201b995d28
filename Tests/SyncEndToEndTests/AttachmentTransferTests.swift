import Foundation
import Logging
import SyncKeys
import SyncServer
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

@testable import SyncClient

/// The client's transfer of attachment content against a real server on 127.0.0.1: chunked
/// uploads that resume at the server's offset after a cut answer, retries with back-off after
/// 5xx answers and lost connections, ranged downloads verified before the sink finishes, and the
/// typed error of a digest mismatch.
@Suite struct AttachmentTransferTests {
    static let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    static let chunk = 64 << 10

    /// A running server with item `p1` of `photos` and the row of attachment `a1` for `bytes`.
    static func withServer(_ bytes: [UInt8] = content, _ body: (RunningServer) async throws -> Void) async throws {
        var configuration = ServerConfiguration(port: 0)
        configuration.logger.logLevel = .critical
        let server = try await RunningServer.start(configuration)
        do {
            let transport = HTTPSyncTransport()
            for (table, object) in [("photos", #"{"id":"p1"}"#), ("photos__attachments", try row(bytes))] {
                let request = SyncRequest(
                    method: .post, url: server.url.appendingPathComponent("tables/\(table)"),
                    headers: [WireHeader.apiVersion: WireHeader.apiVersionValue, "Content-Type": "application/json"], body: Data(object.utf8))
                try #require(try await transport.send(request).statusCode == 201)
            }
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func digest(_ bytes: [UInt8]) throws -> String {
        var hasher = try SHA256Hasher()
        try hasher.update(bytes)
        return Hex.lowercase(try hasher.finalize())
    }

    static func row(_ bytes: [UInt8]) throws -> String {
        #"{"id":"a1","itemId":"p1","name":"porch.jpg","contentType":"image/jpeg","size":\#(bytes.count),"sha256":"\#(try digest(bytes))"}"#
    }

    /// A transfer whose waits are recorded (and run `onWait` instead of sleeping).
    static func transfer(
        _ url: URL, transport: any SyncTransport = HTTPSyncTransport(), waits: Waits, attempts: Int = 6
    ) -> AttachmentTransfer {
        var retry = AttachmentRetry(attempts: attempts, firstDelay: .milliseconds(100), longestDelay: .milliseconds(400))
        retry.sleep = { delay in await waits.record(delay) }
        return AttachmentTransfer(client: MobileServiceClient(url: url, transport: transport), chunkBytes: chunk, retry: retry)
    }

    @Test func anUploadGoesInChunksAndADownloadReadsItBack() async throws {
        try await Self.withServer { server in
            let waits = Waits()
            let transfer = Self.transfer(server.url, waits: waits)
            let source = MemorySource(Self.content)
            try await transfer.upload(
                table: "photos", attachmentID: "a1", size: Int64(Self.content.count), sha256: try Self.digest(Self.content), source: source)
            #expect(await source.offsets == Array(stride(from: 0, to: Int64(Self.content.count), by: Self.chunk)))
            let sink = MemorySink()
            try await transfer.download(table: "photos", attachmentID: "a1", sink: sink)
            #expect(await sink.bytes == Self.content && sink.isFinished)
            #expect(await waits.delays.isEmpty)
            // Uploading again finds it complete and sends nothing.
            try await transfer.upload(
                table: "photos", attachmentID: "a1", size: Int64(Self.content.count), sha256: try Self.digest(Self.content), source: source)
            #expect(await source.offsets.count == 5)
        }
    }

    @Test func aCutAnswerIsResumedFromTheServersOffset() async throws {
        try await Self.withServer { server in
            let proxy = try FaultProxyProcess(upstream: server.url.port ?? 0)
            defer { proxy.close() }
            let url = try #require(URL(string: "http://127.0.0.1:\(proxy.port)"))
            // The network comes back during the first wait.
            let waits = Waits { _ in proxy.set("heal") }
            let transfer = Self.transfer(url, waits: waits)
            // The answer to the second chunk's PATCH is cut.
            let source = MemorySource(Self.content) { offset in if offset == Int64(Self.chunk) { proxy.set("cut") } }
            try await transfer.upload(
                table: "photos", attachmentID: "a1", size: Int64(Self.content.count), sha256: try Self.digest(Self.content), source: source)
            #expect(await waits.delays == [.milliseconds(100)])
            // The second chunk reached the server although its answer was cut: it is not sent again.
            #expect(await source.offsets == Array(stride(from: 0, to: Int64(Self.content.count), by: Self.chunk)))

            // The answer to the second ranged GET is cut in the middle.
            let sink = MemorySink { count in if count == 1 { proxy.set("cut") } }
            let downloads = Waits { _ in proxy.set("heal") }
            try await Self.transfer(url, waits: downloads).download(table: "photos", attachmentID: "a1", sink: sink)
            #expect(await sink.bytes == Self.content && sink.isFinished)
            #expect(await downloads.delays.count == 1)
        }
    }

    @Test func serverErrorsAndLostAnswersAreRetriedWithGrowingWaits() async throws {
        try await Self.withServer { server in
            // The first PATCH is answered 503 unsent; the second is sent and its answer lost; the
            // third is answered 502 unsent.
            let transport = FlakyTransport(base: HTTPSyncTransport(), patchFaults: [.status(503), .lostAnswer, .status(502)])
            let waits = Waits()
            let source = MemorySource(Self.content)
            try await Self.transfer(server.url, transport: transport, waits: waits).upload(
                table: "photos", attachmentID: "a1", size: Int64(Self.content.count), sha256: try Self.digest(Self.content), source: source)
            #expect(await waits.delays == [.milliseconds(100), .milliseconds(200), .milliseconds(100)], "progress starts the count again")
            let offsets = await source.offsets
            let chunk = Int64(Self.chunk)
            #expect(offsets.prefix(5) == [0, 0, chunk, chunk, 2 * chunk], "the lost answer's chunk is not sent again: \(offsets)")
            let sink = MemorySink()
            try await Self.transfer(server.url, waits: Waits()).download(table: "photos", attachmentID: "a1", sink: sink)
            #expect(await sink.bytes == Self.content)

            let down = FlakyTransport(base: HTTPSyncTransport(), patchFaults: [], everyRequestFails: true)
            let spent = Waits()
            let error = await #expect(throws: SyncError.self) {
                try await Self.transfer(server.url, transport: down, waits: spent, attempts: 5).download(
                    table: "photos", attachmentID: "a1", sink: MemorySink())
            }
            #expect(error == .transportFailed)
            #expect(await spent.delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(400)], "doubling, capped")
        }
    }

    @Test func aConflictAtTheSameOffsetIsWaitedFor() async throws {
        try await Self.withServer { server in
            // Answered as while another request (one cut a moment ago) uploads the same content.
            let busy = FlakyTransport(base: HTTPSyncTransport(), patchFaults: [.busy, .busy])
            let waits = Waits()
            let source = MemorySource(Self.content)
            try await Self.transfer(server.url, transport: busy, waits: waits).upload(
                table: "photos", attachmentID: "a1", size: Int64(Self.content.count), sha256: try Self.digest(Self.content), source: source)
            #expect(await waits.delays == [.milliseconds(100), .milliseconds(200)])
            #expect(await source.offsets.prefix(4) == [0, 0, 0, Int64(Self.chunk)])
            let sink = MemorySink()
            try await Self.transfer(server.url, waits: Waits()).download(table: "photos", attachmentID: "a1", sink: sink)
            #expect(await sink.bytes == Self.content)
        }
    }

    @Test func aDigestMismatchIsATypedErrorAndNothingIsFinished() async throws {
        var forged = Self.content
        forged[200_000] ^= 0x40
        try await Self.withServer { server in
            let transfer = Self.transfer(server.url, waits: Waits())
            let error = await #expect(throws: SyncError.self) {
                try await transfer.upload(
                    table: "photos", attachmentID: "a1", size: Int64(forged.count), sha256: try Self.digest(Self.content),
                    source: MemorySource(forged))
            }
            #expect(error == .attachmentDigestMismatch && error?.statusCode == 422)
            try await transfer.upload(
                table: "photos", attachmentID: "a1", size: Int64(Self.content.count), sha256: try Self.digest(Self.content),
                source: MemorySource(Self.content))

            let corrupting = FlakyTransport(base: HTTPSyncTransport(), patchFaults: [], flipsDownloadedByte: true)
            let sink = MemorySink()
            let mismatch = await #expect(throws: SyncError.self) {
                try await Self.transfer(server.url, transport: corrupting, waits: Waits()).download(table: "photos", attachmentID: "a1", sink: sink)
            }
            #expect(mismatch == .attachmentDigestMismatch)
            #expect(!sink.isFinished, "the sink never makes unverified content visible")

            let missing = await #expect(throws: SyncError.self) {
                try await transfer.download(table: "photos", attachmentID: "never", sink: MemorySink())
            }
            #expect(missing == .missingOnServer)
        }
    }
}

/// Content in memory, recording the offsets it was read at.
actor MemorySource: AttachmentContentSource {
    let bytes: [UInt8]
    nonisolated let size: Int64
    private(set) var offsets: [Int64] = []
    private let onRead: @Sendable (Int64) -> Void

    init(_ bytes: [UInt8], onRead: @escaping @Sendable (Int64) -> Void = { _ in }) {
        self.bytes = bytes
        self.size = Int64(bytes.count)
        self.onRead = onRead
    }

    func read(at offset: Int64, count: Int) -> [UInt8] {
        offsets.append(offset)
        onRead(offset)
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }
}

/// A sink in memory that refuses writes anywhere but at its end.
actor MemorySink: AttachmentContentSink {
    private(set) var bytes: [UInt8] = []
    private var writes = 0
    private nonisolated let finished = Atomic<Bool>(false)
    private let onWrite: @Sendable (Int) -> Void

    init(onWrite: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.onWrite = onWrite
    }

    struct NotAtTheEnd: Error {}

    func write(_ bytes: [UInt8], at offset: Int64) throws {
        guard offset == Int64(self.bytes.count) else { throw NotAtTheEnd() }
        self.bytes += bytes
        writes += 1
        onWrite(writes)
    }

    func finish() { finished.store(true, ordering: .relaxed) }

    /// Whether ``finish()`` was called.
    nonisolated var isFinished: Bool { finished.load(ordering: .relaxed) }
}

/// The waits of a retry policy, recorded instead of slept; `onWait` runs at each.
actor Waits {
    private(set) var delays: [Duration] = []
    private let onWait: @Sendable (Int) -> Void

    init(onWait: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.onWait = onWait
    }

    func record(_ delay: Duration) {
        delays.append(delay)
        onWait(delays.count)
    }
}

/// A transport over a real one that fails requests as scripted.
final class FlakyTransport: SyncTransport {
    enum Fault: Sendable { case status(Int), lostAnswer, busy }

    let base: HTTPSyncTransport
    private let faults: Mutex<[Fault]>
    private let everyRequestFails: Bool
    private let flipsDownloadedByte: Bool

    init(base: HTTPSyncTransport, patchFaults: [Fault], everyRequestFails: Bool = false, flipsDownloadedByte: Bool = false) {
        self.base = base
        self.faults = Mutex(patchFaults)
        self.everyRequestFails = everyRequestFails
        self.flipsDownloadedByte = flipsDownloadedByte
    }

    struct Lost: Error {}

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        if everyRequestFails { throw Lost() }
        let fault = request.method == .patch ? faults.withLock { $0.isEmpty ? nil : $0.removeFirst() } : nil
        switch fault {
        case .status(let code)?: return SyncResponse(statusCode: code, body: Data(#"{"error":"unavailable"}"#.utf8))
        case .lostAnswer?:
            _ = try await base.send(request)
            throw Lost()
        case .busy?:
            // As the server answers while another request uploads the same content.
            let offset = request.header(WireHeader.uploadOffset) ?? "0"
            return SyncResponse(statusCode: 409, headers: [WireHeader.uploadOffset: offset], body: Data(#"{"error":"busy"}"#.utf8))
        case nil:
            var response = try await base.send(request)
            if flipsDownloadedByte, request.method == .get, !response.body.isEmpty {
                response.body[response.body.startIndex] ^= 1
            }
            return response
        }
    }
}
