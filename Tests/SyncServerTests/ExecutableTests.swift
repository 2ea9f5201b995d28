import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The built `sync-server` executable: starts on a free port, prints one line, serves, stops on SIGTERM.
@Suite struct ExecutableTests {
    static let executable = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/sync-server")

    @Test func startsServesAndStopsCleanly() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable.path), "build the sync-server product first (scripts/test does)")
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--port", "0", "--log-level", "error"]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.hasPrefix("listening on http://127.0.0.1:"))
        let url = try #require(URL(string: String(text.dropFirst("listening on ".count)) + "/tables/todo"))
        var request = URLRequest(url: url)
        request.setValue("2.0.0", forHTTPHeaderField: "ZUMO-API-VERSION")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let rest = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.isEmpty, "exactly one line on stdout")
    }
}
