import Foundation
import HTTPTypes
import Logging
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built `sync-server` executable: starts on a free port, prints one line, serves, stops on SIGTERM.
@Suite struct ExecutableTests {
    @Test func startsServesAndStopsCleanly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start()
        #expect(server.announcement.hasPrefix("listening on http://127.0.0.1:"))
        var request = URLRequest(url: server.url.appendingPathComponent("tables/todo"))
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        let (status, rest) = server.stop()
        #expect(status == 0, "a graceful shutdown on SIGTERM")
        #expect(rest.isEmpty, "exactly one line on stdout")
    }
}

@Suite struct RunningServerTests {
    @Test func aPortInUseIsAnErrorNotAHang() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let first = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger))
        let port = try #require(first.url.port)
        await #expect(throws: (any Error).self) {
            let second = try await RunningServer.start(ServerConfiguration(port: port, logger: logger))
            await second.stop()
        }
        await first.stop()
    }
}

@Suite struct AuthenticationTests {
    @Test func withATokenConfiguredEveryTableRequestNeedsIt() async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let token = UUID().uuidString
        try await TestServer.run(ServerConfiguration(port: 0, authentication: .sharedToken(token), logger: logger)) { server in
            var signed = TestServer.version
            signed[HTTPField.Name(WireHeader.auth)!] = token
            #expect(try await server.send(.post, "/tables/todo", object: ["id": "1"], headers: signed).status == .created)
            for wrong in [nil, "", String(token.dropLast()), token + "0", token.lowercased() == token ? token.uppercased() : token.lowercased()] {
                var headers = TestServer.version
                if let wrong { headers[HTTPField.Name(WireHeader.auth)!] = wrong }
                let refused = try await server.send(.get, "/tables/todo", headers: headers)
                #expect(refused.status == .unauthorized)
                #expect(refused.errorMessage == "Unauthorized")
                #expect(try await server.send(.post, "/tables/todo", object: ["id": "2"], headers: headers).status == .unauthorized)
            }
            #expect(try await server.send(.get, "/tables/todo", headers: signed).array.map { $0["id"] } == ["1"], "nothing refused was stored")
        }
    }

    @Test func theExecutableReadsItsTokenFromAFile() async throws {
        let directory = try TemporaryDirectory(prefix: "server-token")
        defer { directory.remove() }
        let token = UUID().uuidString
        try Data((token + "\n").utf8).write(to: directory.file("token"))
        let server = try await ServerProcess.start(arguments: ["--auth-token-file", directory.path("token")])
        defer { server.stop() }
        for (header, status) in [(nil, 401), (token, 404)] {
            var request = URLRequest(url: server.url.appendingPathComponent("tables/todo"))
            request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
            if let header { request.setValue(header, forHTTPHeaderField: "X-ZUMO-AUTH") }
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == status)
        }
        let missing = try runProgram(ServerProcess.tool.url.path, ["--port", "0", "--auth-token-file", directory.path("absent")])
        #expect(missing.status != 0 && missing.error.contains("cannot read --auth-token-file"))
    }
}
