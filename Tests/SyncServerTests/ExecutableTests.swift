import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import SyncServer
import SyncTestSupport
import Testing

/// The built `sync-server` executable: starts on a free port, prints one line, serves, stops on SIGTERM.
@Suite struct ExecutableTests {
    @Test func startsServesAndStopsCleanly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try ServerProcess()
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
