import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// The built `todo`, with the insecure test profile allowed so that each run derives its key fast.
let todo = BuiltTool("todo", environment: ["CIPHERSYNC_ALLOW_INSECURE_PROFILE": "1"])

/// One device: a `todo` store in a directory of its own, with a passphrase made for the test.
struct Device {
    let directory: TemporaryDirectory
    let passphrase: String
    var store: String { directory.path("todo.db") }

    init() throws {
        directory = try TemporaryDirectory(prefix: "todo-device")
        var generator = SystemRandomNumberGenerator()
        passphrase = (0..<24).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.joined()
    }

    /// The device options every run starts with (a server that refuses connections by default).
    func deviceArguments(server: URL?) -> [String] {
        ["--store", store, "--server", server?.absoluteString ?? "http://127.0.0.1:1", "--profile", "insecure-test"]
    }

    /// `todo --store <store> --server <server> <arguments…>`, the passphrase in the environment.
    func run(_ arguments: [String], server: URL? = nil, environment: [String: String?] = [:]) async throws -> ToolResult {
        var env: [String: String?] = ["CIPHERSYNC_PASSPHRASE": passphrase]
        for (key, value) in environment { env[key] = value }
        return try await todo.run(deviceArguments(server: server) + arguments, environment: env)
    }

    /// The same, ended with `SIGKILL` after `delay` seconds unless it ended first.
    func run(_ arguments: [String], server: URL?, killAfter delay: Double) async throws -> ToolResult {
        try await todo.run(deviceArguments(server: server) + arguments, environment: ["CIPHERSYNC_PASSPHRASE": passphrase], killAfter: delay)
    }

    /// The same command on a terminal (a pseudo-terminal made by `script`), answering each
    /// prompt as it appears: for each step, wait until the screen shows `prompt`, then type
    /// `line`. The passphrase is in the environment unless `typed` (then a step must type it).
    /// - Returns: The exit status and everything the terminal showed.
    func runOnTerminal(
        _ arguments: [String], server: URL? = nil, dialogue: [(prompt: String, line: String)] = [], typed: Bool = false
    ) throws -> (status: Int32, screen: String) {
        let command = ([todo.url.path] + deviceArguments(server: server) + arguments).map { "'\($0)'" }.joined(separator: " ")
        var environment = todo.baseEnvironment
        if !typed { environment["CIPHERSYNC_PASSPHRASE"] = passphrase }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var screen = Data()
        var seen = 0
        for (prompt, line) in dialogue {
            // Read until the prompt shows after what earlier steps saw (or the program ends).
            while true {
                let text = String(decoding: screen, as: UTF8.self)
                if let range = text.range(of: prompt, range: text.index(text.startIndex, offsetBy: min(seen, text.count))..<text.endIndex) {
                    seen = text.distance(from: text.startIndex, to: range.upperBound)
                    break
                }
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                screen.append(chunk)
            }
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
        }
        try input.fileHandleForWriting.close()
        screen.append(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: screen, as: UTF8.self).replacingOccurrences(of: "\r", with: ""))
    }

    /// Runs a command that must succeed.
    @discardableResult
    func succeed(_ arguments: [String], server: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ToolResult {
        let result = try await run(arguments, server: server)
        try #require(result.exitCode == 0, "todo \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Adds an item and returns its full id.
    func add(_ text: String) async throws -> String {
        try await succeed(["add", text])
        let item = try #require(try await items().first { $0["text"]?.stringValue == text })
        return try #require(item["id"]?.stringValue)
    }

    /// Every item (`list --all --json`).
    func items() async throws -> [JSONObject] {
        let result = try await succeed(["list", "--all", "--json"])
        return try JSONCoding.decode([JSONObject].self, from: Data(result.stdout.utf8))
    }

    /// Text → completed, for comparing devices.
    func state() async throws -> [String: Bool] {
        var state: [String: Bool] = [:]
        for item in try await items() {
            state[item["text"]?.stringValue ?? ""] = item["complete"]?.boolValue ?? false
        }
        return state
    }

    /// The queued operations and the operation errors (`pending --json`).
    func pending() async throws -> (operations: Int, errors: Int) {
        let result = try await succeed(["pending", "--json"])
        let listing = try JSONCoding.decode(JSONObject.self, from: Data(result.stdout.utf8))
        return (listing["operations"]?.arrayValue?.count ?? -1, listing["errors"]?.arrayValue?.count ?? -1)
    }

    /// The name and bytes of every file of the device.
    func files() throws -> [String: Data] {
        try directory.contents()
    }

    func fileURLs() throws -> [URL] {
        try directory.fileURLs()
    }
}

/// A text no file could hold by chance.
func uniqueText(_ label: String) -> String { "\(label) \(UUID().uuidString)" }
