import Foundation
import Logging
import SyncClient
public import SyncKeys
import SyncServer
import SyncStore
import SyncWire

/// `todo demo`: the whole story with no set-up. Starts the server in this process on a free
/// port, makes two encrypted device stores in a temporary directory, and walks through offline
/// edits, sync, a conflict, a soft delete, a passphrase change and a data-key rotation, then
/// proves the files are encrypted. Every step is checked; the result says whether all held.
public struct Demo {
    /// Where the demo writes its lines.
    public var output: @Sendable (String) -> Void
    /// The key profile of the device stores (the real default unless a test asks otherwise).
    public var keyProfile: KeyProfile
    public var allowInsecureKeyProfile: Bool

    public init(
        keyProfile: KeyProfile = .default, allowInsecureKeyProfile: Bool = false,
        output: @escaping @Sendable (String) -> Void = { print($0) }
    ) {
        self.output = output
        self.keyProfile = keyProfile
        self.allowInsecureKeyProfile = allowInsecureKeyProfile
    }

    /// Runs the story. Returns `true` only if every step held.
    public func run() async throws -> Bool {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ciphersync-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        var logger = Logger(label: "demo-server")
        logger.logLevel = .critical
        let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger))
        output("Started the sync server in this process at \(server.url.absoluteString) (embedded SQLite, soft delete on).")
        do {
            let ok = try await story(server: server.url, directory: directory)
            await server.stop()
            return ok
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// The checks of one run.
final class Checklist: @unchecked Sendable {
    // Used from the one task that runs the demo; never shared.
    private(set) var failures: [String] = []
    let output: @Sendable (String) -> Void

    init(output: @escaping @Sendable (String) -> Void) { self.output = output }

    func step(_ title: String) { output("\n== \(title)") }
    func say(_ line: String) { output("   \(line)") }

    func check(_ condition: Bool, _ claim: String) {
        output("   \(condition ? "ok  " : "FAIL") \(claim)")
        if !condition { failures.append(claim) }
    }
}
