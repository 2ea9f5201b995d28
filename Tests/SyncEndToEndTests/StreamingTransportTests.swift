#if os(Linux)
import Foundation
import FoundationNetworking
import NIOHTTP1
import SyncClient
import SyncTestSupport
import SyncWire
import Testing

/// `HTTPSyncTransport.openStream` on Linux (SwiftNIO): what it sends, what it hands back, and
/// that cancelling it at any moment — before the head, while the body is awaited, by dropping the
/// body, or by the server closing — ends everything, closes the connection and leaves no socket
/// open. Each moment is tried many times in a row against a server that holds its answer.
@Suite(.timeLimit(.minutes(10))) struct StreamingTransportTests {
    static let iterations = 200

    static func request(_ server: ScriptedHTTPServer, scheme: String = "http") -> SyncRequest {
        SyncRequest(method: .get, url: server.url("/changes?tables=todo", scheme: scheme), headers: ["Accept": "text/event-stream"])
    }

    /// The first piece of the body; the response is dropped on return.
    static func firstPiece(_ transport: HTTPSyncTransport, _ request: SyncRequest) async throws -> String? {
        let response = try await transport.openStream(request)
        #expect(response.statusCode == 200)
        for try await piece in response.body { return String(decoding: piece, as: UTF8.self) }
        return nil
    }

    @Test func theRequestCarriesTheTransportsHeadersTheHostAndConnectionClose() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let token = UUID().uuidString
        var request = Self.request(server)
        request.headers["Authorization"] = "Bearer " + token
        request.headers["ZUMO-API-VERSION"] = "3.0.0"
        let response = try await HTTPSyncTransport().openStream(request)
        var requests = server.requests.makeAsyncIterator()
        let head = try #require(await requests.next())
        #expect(head.method == .GET)
        #expect(head.uri == "/changes?tables=todo")
        #expect(head.version == .http1_1)
        #expect(head.headers["Host"] == ["127.0.0.1:\(server.port)"])
        #expect(head.headers["Connection"] == ["close"])
        #expect(head.headers["Accept"] == ["text/event-stream"])
        #expect(head.headers["ZUMO-API-VERSION"] == ["3.0.0"])
        #expect(head.headers["Authorization"] == ["Bearer " + token])

        #expect(response.statusCode == 200)
        let answer = SyncResponse(statusCode: response.statusCode, headers: response.headers)
        #expect(answer.header("content-type") == "text/event-stream")
        #expect(answer.header("X-Script") == "one, two")
        var body = ""
        for try await piece in response.body { body += String(decoding: piece, as: UTF8.self) }
        #expect(body == ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece)
        var closed = server.closedConnections.makeAsyncIterator()
        #expect(await closed.next() != nil)
        #expect(try LoopbackSockets.count(connectedTo: server.port) == 0)
        try await server.stop()
    }

    @Test func droppingTheBodyClosesTheConnection() async throws {
        let server = try await ScriptedHTTPServer.start(.holdAfterFirstPiece)
        let transport = HTTPSyncTransport()
        var closed = server.closedConnections.makeAsyncIterator()
        for _ in 0..<Self.iterations {
            #expect(try await Self.firstPiece(transport, Self.request(server)) == ScriptedHTTPServer.firstPiece)
            #expect(await closed.next() != nil)
        }
        // Dropped before its first piece was read.
        for _ in 0..<Self.iterations {
            _ = try await transport.openStream(Self.request(server))
            #expect(await closed.next() != nil)
        }
        #expect(try LoopbackSockets.count(connectedTo: server.port) == 0)
        try await server.stop()
    }

    @Test func cancellingTheCallerWhileItWaitsForTheHeadThrowsCancellation() async throws {
        let server = try await ScriptedHTTPServer.start(.holdBeforeHead)
        let transport = HTTPSyncTransport()
        var requests = server.requests.makeAsyncIterator()
        var closed = server.closedConnections.makeAsyncIterator()
        for _ in 0..<Self.iterations {
            let caller = Task { try await transport.openStream(Self.request(server)) }
            #expect(await requests.next() != nil)
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(await closed.next() != nil)
        }
        #expect(try LoopbackSockets.count(connectedTo: server.port) == 0)
        try await server.stop()
    }

    @Test func cancellingTheCallerAtAnyMomentThrowsCancellationAndLeavesNoSocket() async throws {
        let server = try await ScriptedHTTPServer.start(.holdBeforeHead)
        let transport = HTTPSyncTransport()
        for iteration in 0..<Self.iterations {
            let caller = Task {
                // Every tenth caller is cancelled before it calls; the others somewhere while
                // connecting, sending or waiting.
                if iteration % 10 == 0 { withUnsafeCurrentTask { $0?.cancel() } }
                return try await transport.openStream(Self.request(server))
            }
            for _ in 0..<(iteration % 7) { await Task.yield() }
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            // The call throws only once its connection is closed.
            #expect(try LoopbackSockets.count(connectedTo: server.port) == 0)
        }
        try await server.stop()
    }

    @Test func cancellingTheConsumerWhileItWaitsForAPieceEndsTheBody() async throws {
        let server = try await ScriptedHTTPServer.start(.holdAfterFirstPiece)
        let transport = HTTPSyncTransport()
        var closed = server.closedConnections.makeAsyncIterator()
        for _ in 0..<Self.iterations {
            let response = try await transport.openStream(Self.request(server))
            let (readOne, didRead) = AsyncStream<Void>.makeStream()
            let consumer = Task {
                var pieces = 0
                for try await _ in response.body {
                    pieces += 1
                    didRead.yield()
                }
                return pieces
            }
            var reads = readOne.makeAsyncIterator()
            #expect(await reads.next() != nil)
            consumer.cancel()
            // The iteration ends (AsyncThrowingStream ends a cancelled consumer's loop) or throws
            // the cancellation; either way after the one piece the server sent.
            switch await consumer.result {
            case .success(let pieces): #expect(pieces == 1)
            case .failure(let error): #expect(error is CancellationError)
            }
            #expect(await closed.next() != nil)
        }
        #expect(try LoopbackSockets.count(connectedTo: server.port) == 0)
        try await server.stop()
    }

    @Test func theServerEndingOrCuttingTheResponseEndsTheBody() async throws {
        let complete = try await ScriptedHTTPServer.start(.complete)
        let cut = try await ScriptedHTTPServer.start(.closeAfterFirstPiece)
        let transport = HTTPSyncTransport()
        for _ in 0..<Self.iterations {
            var body = ""
            for try await piece in try await transport.openStream(Self.request(complete)).body {
                body += String(decoding: piece, as: UTF8.self)
            }
            #expect(body == ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece)

            body = ""
            do {
                for try await piece in try await transport.openStream(Self.request(cut)).body {
                    body += String(decoding: piece, as: UTF8.self)
                }
                Issue.record("a response cut short ended without an error")
            } catch let error as URLError {
                #expect(error.code == .networkConnectionLost)
            }
            #expect(body == ScriptedHTTPServer.firstPiece)
        }
        #expect(try LoopbackSockets.count(connectedTo: complete.port) == 0)
        #expect(try LoopbackSockets.count(connectedTo: cut.port) == 0)
        try await complete.stop()
        try await cut.stop()
    }

    @Test func failuresAreTheURLErrorsURLSessionReports() async throws {
        // Nobody listens.
        let nobody = try RefusingPort()
        let toNobody = SyncRequest(method: .get, url: nobody.url("/changes?tables=todo"), headers: ["Accept": "text/event-stream"])
        let refused = await #expect(throws: URLError.self) { try await HTTPSyncTransport().openStream(toNobody) }
        #expect(refused?.code == .cannotConnectToHost)
        extendLifetime(nobody)

        // Silence longer than the timeout, before the head and between two pieces. A second: a
        // busy machine can take a few tenths of one to answer the head of the stalled server.
        let quick = HTTPSyncTransport(timeout: 1)
        let silent = try await ScriptedHTTPServer.start(.holdBeforeHead)
        let noHead = await #expect(throws: URLError.self) { try await quick.openStream(Self.request(silent)) }
        #expect(noHead?.code == .timedOut)
        let stalled = try await ScriptedHTTPServer.start(.holdAfterFirstPiece)
        let response = try await quick.openStream(Self.request(stalled))
        var pieces = 0
        let idle = await #expect(throws: URLError.self) {
            for try await _ in response.body { pieces += 1 }
        }
        #expect(idle?.code == .timedOut)
        #expect(pieces == 1)

        // TLS to a server that speaks plain HTTP.
        let notTLS = await #expect(throws: URLError.self) { try await HTTPSyncTransport().openStream(Self.request(silent, scheme: "https")) }
        #expect(notTLS?.code == .secureConnectionFailed)

        for server in [silent, stalled] {
            #expect(try LoopbackSockets.count(connectedTo: server.port) == 0)
            try await server.stop()
        }
    }

    /// The change stream of a `sync-server` process, cancelled over and over at any moment:
    /// while connecting, waiting for the head, or reading the body.
    @Test func aServersChangeStreamCancelledAtAnyMomentEndsCleanly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start()
        let transport = HTTPSyncTransport()
        let request = SyncRequest(
            method: .get, url: server.url.appendingPathComponent("changes").appending(queryItems: [URLQueryItem(name: "tables", value: "todo")]),
            headers: [WireHeader.apiVersion: WireHeader.apiVersionValue, "Accept": "text/event-stream"])
        var answered = 0
        for iteration in 0..<Self.iterations {
            let (readOne, didRead) = AsyncStream<Void>.makeStream()
            let listener = Task {
                let response = try await transport.openStream(request)
                #expect(response.statusCode == 200)
                for try await _ in response.body { didRead.yield() }
            }
            if iteration % 2 == 0 {
                // Once the first piece (`retry: 1000`) arrived.
                var reads = readOne.makeAsyncIterator()
                if await reads.next() != nil { answered += 1 }
            } else {
                for _ in 0..<(iteration % 11) { await Task.yield() }
            }
            listener.cancel()
            // A cancelled caller throws the cancellation; a cancelled reader's loop ends or
            // throws it.
            if case .failure(let error) = await listener.result { #expect(error is CancellationError) }
        }
        #expect(answered == Self.iterations / 2)
        server.stop()
    }
}
#endif
