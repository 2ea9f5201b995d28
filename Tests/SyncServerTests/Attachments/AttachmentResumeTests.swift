import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// Uploads resume where the server's content ends: after the connection is cut in the middle of
/// a body, and after the `sync-server` process is killed (`kill -9`) and started again over the
/// same SQLite file, whose attachment directory keeps the partial content.
@Suite struct AttachmentResumeTests {
    static let content = AttachmentFixture.content(1_500_000, seed: 3)
    /// What the interrupted request sends before it is cut: more than two of the server's chunks.
    static let sent = 700_000

    /// An item and the row of attachment `a1` for ``content``.
    static func seed(_ client: HTTPTestClient, _ base: URL) async throws {
        try #require(try await client.send(.post, base, "/tables/photos", object: ["id": "p1"]).status == .created)
        let row = try AttachmentFixture.row("a1", item: "p1", content: content)
        try #require(try await client.send(.post, base, "/tables/photos__attachments", object: row).status == .created)
    }

    static func offset(_ client: HTTPTestClient, _ base: URL) async throws -> Int64 {
        try #require(try await client.send(.head, base, "/tables/photos__attachments/a1/content").uploadOffset)
    }

    /// Starts a `PATCH` of the whole content that sends ``sent`` bytes and then nothing more;
    /// returns once the server holds at least two chunks of them. The caller cuts it.
    static func interruptedUpload(_ http: HTTPClient, _ client: HTTPTestClient, _ base: URL) async throws -> Task<Void, Never> {
        var request = HTTPClientRequest(url: base.absoluteString + "/tables/photos__attachments/a1/content")
        request.method = .PATCH
        for (name, value) in AttachmentFixture.uploadPairs(offset: 0) + [(WireHeader.apiVersion, WireHeader.apiVersionValue)] {
            request.headers.add(name: name, value: value)
        }
        let (body, feed) = AsyncStream<ByteBuffer>.makeStream()
        request.body = .stream(body, length: .known(Int64(content.count)))
        let task = Task { _ = try? await http.execute(request, timeout: .seconds(120)) }
        for start in stride(from: 0, to: sent, by: 50_000) { feed.yield(ByteBuffer(bytes: content[start..<min(sent, start + 50_000)])) }
        // The server's state is visible through HEAD alone: wait (bounded) until it holds them.
        let deadline = ContinuousClock.now + .seconds(60)
        while try await offset(client, base) < 2 * 256 * 1024, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        _ = feed
        return task
    }

    /// Sends the rest of the content from the offset the server holds, taking a 409's offset
    /// (the cut request may still be finishing) until it is complete.
    static func resume(_ client: HTTPTestClient, _ base: URL) async throws -> Int64 {
        var offset = try await offset(client, base)
        let first = offset
        for _ in 0..<50 {
            let reply = try await client.send(
                .patch, base, "/tables/photos__attachments/a1/content", bytes: Array(content[Int(offset)...]),
                headers: AttachmentFixture.uploadPairs(offset: offset))
            if reply.status == .noContent { break }
            try #require(reply.status == .conflict, "\(reply.status) \(reply.errorMessage ?? "")")
            offset = try #require(reply.uploadOffset)
        }
        return first
    }

    /// Runs `body` with a streaming client and the tests' client, then shuts both down, whether
    /// `body` throws or not.
    static func withClients(_ body: (HTTPClient, HTTPTestClient) async throws -> Void) async throws {
        let client = HTTPTestClient()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var failure: (any Error)?
        do { try await body(http, client) } catch { failure = error }
        try? await http.shutdown()
        try? await client.shutdown()
        if let failure { throw failure }
    }

    @Test func anUploadCutInTheMiddleResumesAtTheServersOffset() async throws {
        let directory = try TemporaryDirectory(prefix: "attachments")
        defer { directory.remove() }
        let server = try await ServerProcess.start(database: "sqlite:" + directory.path("server.db"))
        defer { server.stop() }
        try await Self.withClients { http, client in
            try await Self.seed(client, server.url)
            let upload = try await Self.interruptedUpload(http, client, server.url)
            upload.cancel()
            await upload.value
            let resumedAt = try await Self.resume(client, server.url)
            #expect(resumedAt >= 2 * 256 * 1024 && resumedAt <= Int64(Self.sent), "\(resumedAt)")
            let whole = try await client.send(.get, server.url, "/tables/photos__attachments/a1/content")
            #expect(whole.status == .ok && whole.body == Data(Self.content))
        }
    }

    @Test func anUploadResumesAfterTheServerIsKilled() async throws {
        let directory = try TemporaryDirectory(prefix: "attachments")
        defer { directory.remove() }
        let database = "sqlite:" + directory.path("server.db")
        try await Self.withClients { http, client in
            let first = try await ServerProcess.start(database: database)
            try await Self.seed(client, first.url)
            let upload = try await Self.interruptedUpload(http, client, first.url)
            first.send(signal: SIGKILL)
            #expect(first.waitForExit() == -SIGKILL)
            await upload.value

            let second = try await ServerProcess.start(database: database)
            defer { second.stop() }
            let resumedAt = try await Self.resume(client, second.url)
            #expect(resumedAt >= 2 * 256 * 1024 && resumedAt <= Int64(Self.sent), "the partial content survived: \(resumedAt)")
            let whole = try await client.send(.get, second.url, "/tables/photos__attachments/a1/content")
            let digest = try AttachmentFixture.digest(Self.content)
            #expect(whole.status == .ok && whole.body == Data(Self.content) && whole.eTag == "\"\(digest)\"")

            // The content sits in the directory beside the file, private, named by neither id nor file name.
            let attachments = directory.path("server.db.attachments")
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: attachments)[.posixPermissions] as? Int)
            #expect(mode & 0o777 == 0o700)
            let files = try FileManager.default.contentsOfDirectory(atPath: attachments)
            #expect(files.count == 1 && files.allSatisfy { $0.count == 64 && !$0.contains("a1") && !$0.hasSuffix(".part") }, "\(files)")
        }
    }
}
