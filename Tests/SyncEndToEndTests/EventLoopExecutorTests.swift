#if os(Linux)
import Foundation
import NIOCore
@testable import SyncClient
import SyncTestSupport
import Testing

/// The executor a push prefers on Linux: the event loop of the transport's kept-alive connection
/// to the server, on which a task preferring it sends, is answered and goes on.
@Suite(.timeLimit(.minutes(2))) struct EventLoopExecutorTests {
    @Test func requestsOfATaskPreferringTheExecutorRunOnTheLoopOfTheirConnection() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let client = NIOHTTPClient(idleTimeout: .minutes(10))
        let transport = HTTPSyncTransport(client: client)
        let request = WholeRequestTransportTests.request(server)
        _ = try await transport.send(request)
        let executor = try #require(transport.executor(for: request.url) as? EventLoopExecutor)
        let key = HTTPConnectionPool.Key(secure: false, host: "127.0.0.1", port: server.port)
        let loop = try #require(client.pool.loop(key))
        #expect(executor.loop === loop)
        #expect(!executor.loop.inEventLoop)

        let expected = Data((ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece).utf8)
        let answers = try await withTaskExecutorPreference(executor) {
            var answers: [Bool] = []
            for _ in 0..<20 {
                let response = try await transport.send(request)
                answers.append(response.body == expected && executor.loop.inEventLoop)
            }
            return answers
        }
        #expect(answers == Array(repeating: true, count: 20))
        // The same connection served them all.
        #expect(server.acceptedCount == 1)
        #expect(transport.idleConnectionCount == 1)
        await transport.closeIdleConnections()
        try await server.stop()
    }

    @Test func aURLTheClientDoesNotSendToHasNoExecutor() throws {
        let transport = HTTPSyncTransport(client: NIOHTTPClient())
        #expect(transport.executor(for: try #require(URL(string: "ftp://127.0.0.1/"))) == nil)
    }
}
#endif
