import Foundation
import SyncTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The executable's `--storage-timeout` and `--metrics-port`: documented in `--help`, out-of-range
/// values refused with exit code 64 and a message naming the option, and a metrics listener of its
/// own that the API's port does not share.
@Suite struct OutageAndMetricsFlagsTests {
    @Test func helpNamesTheOptions() throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let help = try runProgram(ServerProcess.tool.url.path, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--storage-timeout <ms>") && help.output.contains("--metrics-port <port>"))
    }

    @Test(arguments: [
        (["--storage-timeout", "99"], "--storage-timeout must be 100 to 600000 ms"),
        (["--storage-timeout", "600001"], "--storage-timeout must be 100 to 600000 ms"),
        (["--metrics-port", "65536"], "--metrics-port must be between 0 and 65535"),
        (["--port", "8123", "--metrics-port", "8123"], "--metrics-port must differ from --port"),
    ])
    func outOfRangeValuesAreRefused(_ arguments: [String], _ message: String) throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let result = try runProgram(ServerProcess.tool.url.path, arguments)
        #expect(result.status == 64, "\(result.error)")
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test func metricsAreServedOnTheirOwnPortOnly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start(
            arguments: ["--metrics-port", "0", "--storage-timeout", "2000"], logLevel: "info", capturesLog: true)
        defer { _ = server.stop() }
        let log = await server.log(until: "Serving metrics")
        let line = try #require(log.split(separator: "\n").first { $0.contains("Serving metrics") })
        let address = try #require(line.split(separator: " ").first { $0.hasPrefix("url=") }?.dropFirst(4))
        let metricsURL = try #require(URL(string: String(address)))
        let (body, response) = try await URLSession.shared.data(from: metricsURL)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("ciphersync_items_pushed_total 0"))
        let (_, onAPIPort) = try await URLSession.shared.data(from: server.url.appendingPathComponent("metrics"))
        #expect((onAPIPort as? HTTPURLResponse)?.statusCode == 404)
    }
}
