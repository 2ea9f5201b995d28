#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
@testable import SyncClient
import SyncTestSupport
import SyncWire
import Testing

/// `HTTPSyncTransport.send` on Linux (SwiftNIO): what it sends, what it hands back, that whole
/// requests in a row share one kept-alive connection, that cancelling it at any moment — before
/// the connection, while writing the body, while waiting for the head, while reading the body —
/// throws the cancellation only once the connection is closed (never kept), and that a kept-alive
/// connection the server closed is retried only for a request that may be sent twice. Each moment
/// is tried many times in a row against a server that holds its answer.
@Suite(.timeLimit(.minutes(10))) struct WholeRequestTransportTests {
    static let iterations = 200

    static func request(_ server: ScriptedHTTPServer, scheme: String = "http", body: Data? = nil) -> SyncRequest {
        SyncRequest(
            method: body == nil ? .get : .post, url: server.url("/tables/todo?$top=2&$filter=text%20eq%20'a'", scheme: scheme),
            headers: ["Accept": "application/json"], body: body)
    }

    /// A transport whose idle connections stay kept whatever pause a busy machine makes between
    /// two statements of a test.
    static func keepingTransport() -> HTTPSyncTransport {
        HTTPSyncTransport(client: NIOHTTPClient(idleTimeout: .minutes(10)))
    }

    /// Whether nothing of this process is connected to `port` any more.
    static func noSocket(to port: Int) throws -> Bool {
        try LoopbackSockets.count(connectedTo: port) == 0
    }

    @Test func theRequestCarriesItsBodyWithItsLengthAndTheResponseComesWhole() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let token = UUID().uuidString
        let body = Data(#"{"id":"a","text":"\#(UUID().uuidString)"}"#.utf8)
        var request = Self.request(server, body: body)
        request.headers["Authorization"] = "Bearer " + token
        request.headers[WireHeader.apiVersion] = WireHeader.apiVersionValue
        request.headers["Content-Type"] = "application/json"
        let transport = Self.keepingTransport()
        let response = try await transport.send(request)
        // The connection is kept for the next request, and only it.
        #expect(transport.idleConnectionCount == 1)
        let sockets = try LoopbackSockets.count(connectedTo: server.port)
        #expect(sockets == 1)
        await transport.closeIdleConnections()
        #expect(transport.idleConnectionCount == 0)
        #expect(try Self.noSocket(to: server.port))

        var requests = server.requests.makeAsyncIterator()
        let head = try #require(await requests.next())
        #expect(head.method == .POST)
        #expect(head.uri == "/tables/todo?$top=2&$filter=text%20eq%20'a'")
        #expect(head.version == .http1_1)
        #expect(head.headers["Host"] == ["127.0.0.1:\(server.port)"])
        // HTTP/1.1 keeps the connection open unless a side says otherwise.
        #expect(head.headers["Connection"].isEmpty)
        #expect(head.headers["Content-Length"] == [String(body.count)])
        #expect(head.headers["Transfer-Encoding"].isEmpty)
        #expect(head.headers["Content-Type"] == ["application/json"])
        #expect(head.headers["Accept"] == ["application/json"])
        #expect(head.headers[WireHeader.apiVersion] == [WireHeader.apiVersionValue])
        #expect(head.headers["Authorization"] == ["Bearer " + token])
        var bodies = server.bodies.makeAsyncIterator()
        #expect(await bodies.next() == body)

        #expect(response.statusCode == 200)
        #expect(response.header("content-type") == "text/event-stream")
        #expect(response.header("X-Script") == "one, two")
        #expect(String(decoding: response.body, as: UTF8.self) == ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece)

        // Without a body: no Content-Length, nothing sent after the head.
        _ = try await transport.send(Self.request(server))
        let get = try #require(await requests.next())
        #expect(get.method == .GET)
        #expect(get.headers["Content-Length"].isEmpty)
        #expect(await bodies.next() == Data())
        await transport.closeIdleConnections()
        #expect(try Self.noSocket(to: server.port))
        try await server.stop()
    }

    @Test func requestsInARowEachComeWholeOverOneKeptAliveConnection() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        // An idle timeout no pause of a busy machine reaches.
        let client = NIOHTTPClient(idleTimeout: .minutes(10))
        var closed = server.closedConnections.makeAsyncIterator()
        for iteration in 0..<Self.iterations {
            let body = iteration % 2 == 0 ? nil : Data(repeating: UInt8(iteration % 256), count: iteration * 1_000)
            let response = try await client.send(Self.request(server, body: body), timeout: 60)
            #expect(response.body == Data((ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece).utf8))
            #expect(client.pool.count == 1)
            let sockets = try LoopbackSockets.count(connectedTo: server.port)
            #expect(sockets == 1)
        }
        #expect(server.acceptedCount == 1)
        await client.closeIdleConnections()
        #expect(try Self.noSocket(to: server.port))
        #expect(await closed.next() != nil)
        try await server.stop()
    }

    @Test func requestsInARowThatSayConnectionCloseEachLeaveNoSocket() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let transport = HTTPSyncTransport()
        var closed = server.closedConnections.makeAsyncIterator()
        var requests = server.requests.makeAsyncIterator()
        for iteration in 0..<Self.iterations {
            let body = iteration % 2 == 0 ? nil : Data(repeating: UInt8(iteration % 256), count: iteration * 1_000)
            var request = Self.request(server, body: body)
            request.headers["Connection"] = "close"
            let response = try await transport.send(request)
            #expect(response.body == Data((ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece).utf8))
            #expect(try #require(await requests.next()).headers["Connection"] == ["close"])
            // The connection is closed before the response is handed back.
            #expect(transport.idleConnectionCount == 0)
            #expect(try Self.noSocket(to: server.port))
            #expect(await closed.next() != nil)
        }
        #expect(server.acceptedCount == Self.iterations)
        try await server.stop()
    }

    @Test func anIdleConnectionIsClosedAfterTheIdleTimeout() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let client = NIOHTTPClient(idleTimeout: .milliseconds(100))
        var closed = server.closedConnections.makeAsyncIterator()
        let response = try await client.send(Self.request(server), timeout: 60)
        #expect(response.statusCode == 200)
        #expect(server.acceptedCount == 1)
        // The server sees the end of the connection the client closed once idle for too long
        // (the response did not say to close it: see the kept-alive tests).
        #expect(await closed.next() != nil)
        #expect(client.pool.count == 0)
        #expect(try Self.noSocket(to: server.port))
        // The next request opens a new connection.
        #expect(try await client.send(Self.request(server), timeout: 60).statusCode == 200)
        #expect(server.acceptedCount == 2)
        await client.closeIdleConnections()
        #expect(try Self.noSocket(to: server.port))
        try await server.stop()
    }

    @Test func thePoolKeepsAtMostItsMaximumOfIdleConnections() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let client = NIOHTTPClient(maximumIdle: 2)
        let request = Self.request(server)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let status = try await client.send(request, timeout: 60).statusCode
                    #expect(status == 200)
                }
            }
            try await group.waitForAll()
        }
        #expect(client.pool.count <= 2)
        #expect(try LoopbackSockets.count(connectedTo: server.port) <= 2)
        await client.closeIdleConnections()
        #expect(try Self.noSocket(to: server.port))
        try await server.stop()
    }

    @Test func aKeptAliveConnectionTheServerClosedIsRetriedOnlyForARepeatableRequest() async throws {
        let server = try await ScriptedHTTPServer.start(.closeOnSecondRequest)
        let transport = Self.keepingTransport()
        var requests = server.requests.makeAsyncIterator()
        for iteration in 0..<Self.iterations / 10 {
            // A first request opens a connection and leaves it kept alive.
            #expect(try await transport.send(Self.request(server)).statusCode == 200)
            #expect(await requests.next()?.method == .GET)
            #expect(transport.idleConnectionCount == 1)
            if iteration % 2 == 0 {
                // A GET on it is read, then the connection is closed unanswered: it is sent once
                // more, on a new connection, and answered.
                let accepted = server.acceptedCount
                let response = try await transport.send(Self.request(server))
                #expect(response.statusCode == 200)
                #expect(await requests.next()?.method == .GET)
                #expect(await requests.next()?.method == .GET)
                #expect(server.acceptedCount == accepted + 1)
            } else {
                // A POST is never sent twice: the caller hears the connection was lost.
                let lost = await #expect(throws: URLError.self) { try await transport.send(Self.request(server, body: Data("{}".utf8))) }
                #expect(lost?.code == .networkConnectionLost)
                #expect(await requests.next()?.method == .POST)
                // The next request the server reads is the next one sent.
                var probe = Self.request(server)
                probe.headers["X-Probe"] = String(iteration)
                #expect(try await transport.send(probe).statusCode == 200)
                #expect(await requests.next()?.headers["X-Probe"] == [String(iteration)])
            }
            await transport.closeIdleConnections()
            #expect(try Self.noSocket(to: server.port))
        }
        try await server.stop()
    }

    @Test func cancellingOrTimingOutOnAKeptAliveConnectionClosesIt() async throws {
        let server = try await ScriptedHTTPServer.start(.holdSecondRequest)
        let client = NIOHTTPClient(idleTimeout: .minutes(10))
        var requests = server.requests.makeAsyncIterator()
        var closed = server.closedConnections.makeAsyncIterator()
        for iteration in 0..<Self.iterations {
            #expect(try await client.send(Self.request(server), timeout: 60).statusCode == 200)
            #expect(await requests.next() != nil)
            #expect(client.pool.count == 1)
            let second = Self.request(server, body: iteration % 3 == 0 ? Data("{}".utf8) : nil)
            if iteration % 20 == 0 {
                // Silence longer than the timeout is a timeout, never a second try.
                let idle = await #expect(throws: URLError.self) { try await client.send(second, timeout: 0.2) }
                #expect(idle?.code == .timedOut)
                #expect(await requests.next() != nil)
            } else {
                let caller = Task { [second] in try await client.send(second, timeout: 60) }
                #expect(await requests.next() != nil)
                for _ in 0..<(iteration % 7) { await Task.yield() }
                caller.cancel()
                await #expect(throws: CancellationError.self) { try await caller.value }
            }
            // The connection is closed, not kept.
            #expect(client.pool.count == 0)
            #expect(try Self.noSocket(to: server.port))
            #expect(await closed.next() != nil)
        }
        #expect(server.acceptedCount == Self.iterations)
        try await server.stop()
    }

    @Test func cancellingWhileWaitingForTheHeadThrowsCancellation() async throws {
        let server = try await ScriptedHTTPServer.start(.holdBeforeHead)
        let transport = HTTPSyncTransport()
        var requests = server.requests.makeAsyncIterator()
        var closed = server.closedConnections.makeAsyncIterator()
        for _ in 0..<Self.iterations {
            let caller = Task { try await transport.send(Self.request(server)) }
            #expect(await requests.next() != nil)
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(try Self.noSocket(to: server.port))
            #expect(await closed.next() != nil)
        }
        try await server.stop()
    }

    @Test func cancellingWhileWritingTheBodyThrowsCancellation() async throws {
        let server = try await ScriptedHTTPServer.start(.stallReading)
        let transport = HTTPSyncTransport()
        // Far more than the socket buffers hold while the server does not read.
        let body = Data(repeating: 0x61, count: 8 << 20)
        var accepted = server.acceptedConnections.makeAsyncIterator()
        var closed = server.closedConnections.makeAsyncIterator()
        for _ in 0..<Self.iterations {
            let caller = Task { try await transport.send(Self.request(server, body: body)) }
            #expect(await accepted.next() != nil)
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(try Self.noSocket(to: server.port))
            server.closeStalledConnections()
            #expect(await closed.next() != nil)
        }
        try await server.stop()
    }

    @Test func cancellingAtAnyMomentThrowsCancellationAndLeavesNoSocket() async throws {
        // The server sends the head and a first piece, then holds the rest.
        let server = try await ScriptedHTTPServer.start(.holdAfterFirstPiece)
        let transport = HTTPSyncTransport()
        for iteration in 0..<Self.iterations {
            let caller = Task {
                // Every tenth caller is cancelled before it calls; the others somewhere while
                // connecting, sending, or waiting for the head or the body.
                if iteration % 10 == 0 { withUnsafeCurrentTask { $0?.cancel() } }
                return try await transport.send(Self.request(server, body: iteration % 3 == 0 ? Data("{}".utf8) : nil))
            }
            for _ in 0..<(iteration % 7) { await Task.yield() }
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(try Self.noSocket(to: server.port))
        }
        try await server.stop()
    }

    @Test func cancellingOnceTheServerAnsweredThrowsCancellation() async throws {
        // The server sends the head and a first piece as soon as it read the request, then holds
        // the rest: the caller is cancelled while the head or the body is on its way or awaited.
        let server = try await ScriptedHTTPServer.start(.holdAfterFirstPiece)
        let transport = HTTPSyncTransport()
        var requests = server.requests.makeAsyncIterator()
        var closed = server.closedConnections.makeAsyncIterator()
        for iteration in 0..<Self.iterations {
            let caller = Task { try await transport.send(Self.request(server)) }
            #expect(await requests.next() != nil)
            for _ in 0..<(iteration % 7) { await Task.yield() }
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            #expect(try Self.noSocket(to: server.port))
            #expect(await closed.next() != nil)
        }
        try await server.stop()
    }

    @Test func failuresAreTheURLErrorsURLSessionReports() async throws {
        // Nobody listens.
        let nobody = try RefusingPort()
        let toNobody = SyncRequest(method: .get, url: nobody.url("/tables/todo"), headers: ["Accept": "application/json"])
        let refused = await #expect(throws: URLError.self) { try await HTTPSyncTransport().send(toNobody) }
        #expect(refused?.code == .cannotConnectToHost)
        extendLifetime(nobody)

        // A name that does not resolve (.invalid never does).
        let nowhere = SyncRequest(method: .get, url: URL(string: "http://nowhere.invalid:8080/tables/todo")!)
        let unknown = await #expect(throws: URLError.self) { try await HTTPSyncTransport().send(nowhere) }
        #expect(unknown?.code == .cannotFindHost)

        // Silence longer than the timeout, before the head and between two pieces.
        let quick = HTTPSyncTransport(timeout: 0.2)
        let silent = try await ScriptedHTTPServer.start(.holdBeforeHead)
        let noHead = await #expect(throws: URLError.self) { try await quick.send(Self.request(silent)) }
        #expect(noHead?.code == .timedOut)
        let stalled = try await ScriptedHTTPServer.start(.holdAfterFirstPiece)
        let idle = await #expect(throws: URLError.self) { try await quick.send(Self.request(stalled)) }
        #expect(idle?.code == .timedOut)

        // The server closing in the middle of the response.
        let cut = try await ScriptedHTTPServer.start(.closeAfterFirstPiece)
        let lost = await #expect(throws: URLError.self) { try await HTTPSyncTransport().send(Self.request(cut)) }
        #expect(lost?.code == .networkConnectionLost)

        // TLS to a server that speaks plain HTTP.
        let notTLS = await #expect(throws: URLError.self) { try await HTTPSyncTransport().send(Self.request(silent, scheme: "https")) }
        #expect(notTLS?.code == .secureConnectionFailed)

        for server in [silent, stalled, cut] {
            #expect(try Self.noSocket(to: server.port))
            try await server.stop()
        }
    }

    /// Pulls and inserts against a `sync-server` process, cancelled over and over at any moment;
    /// every other one runs to its end.
    @Test func aServersRequestsCancelledAtAnyMomentEndCleanly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start()
        let transport = HTTPSyncTransport()
        let headers = [WireHeader.apiVersion: WireHeader.apiVersionValue, "Content-Type": "application/json"]
        let table = server.url.appendingPathComponent("tables").appendingPathComponent("todo")
        func insert() -> SyncRequest {
            SyncRequest(method: .post, url: table, headers: headers, body: Data(#"{"id":"\#(UUID().uuidString)","text":"t"}"#.utf8))
        }
        // The table exists once it has an item.
        #expect(try await transport.send(insert()).statusCode == 201)
        var completed = 0
        for iteration in 0..<Self.iterations {
            let request = iteration % 4 < 2 ? SyncRequest(method: .get, url: table, headers: headers) : insert()
            let caller = Task { try await transport.send(request) }
            if iteration % 2 == 1 {
                for _ in 0..<(iteration % 11) { await Task.yield() }
                caller.cancel()
            }
            switch await caller.result {
            case .success(let response):
                #expect(response.isSuccess, "\(request) answered \(response.statusCode)")
                completed += 1
            case .failure(let error):
                #expect(iteration % 2 == 1 && error is CancellationError, "\(request) failed with \(error)")
            }
            // At most the one kept-alive connection of these requests in a row stays open, and
            // only while idle.
            let open = try LoopbackSockets.count(connectedTo: server.url.port ?? 0)
            #expect(open <= 1, "iteration \(iteration)")

            #expect(transport.idleConnectionCount <= 1)
            if iteration % 10 == 9 {
                await transport.closeIdleConnections()
                #expect(try Self.noSocket(to: server.url.port ?? 0))
            }
        }
        #expect(completed >= Self.iterations / 2)
        await transport.closeIdleConnections()
        #expect(try Self.noSocket(to: server.url.port ?? 0))
        server.stop()
    }
}
#endif
