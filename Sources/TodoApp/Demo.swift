public import Foundation
import SyncClient
public import SyncKeys
import SyncStore
import SyncWire

/// `todo demo`: the whole story against a running sync server. Makes two encrypted device stores
/// in a temporary directory, and walks through offline edits, sync, a conflict, a soft delete, a
/// passphrase change and a data-key rotation, then proves the files are encrypted. Every step is
/// checked; the result says whether all held. The caller provides the server (the `todo`
/// executable starts one in its own process).
public struct Demo {
    /// Where the demo writes its lines.
    public var output: @Sendable (String) -> Void
    /// The key profile of the device stores (the real default unless a test asks otherwise).
    public var keyProfile: KeyProfile
    /// Whether the device stores may use a key profile below the floor (tests only).
    public var allowInsecureKeyProfile: Bool

    /// Creates the demo.
    /// - Parameters:
    ///   - keyProfile: the key profile of the device stores.
    ///   - allowInsecureKeyProfile: whether `keyProfile` may be below the floor (tests only).
    ///   - output: where the demo writes its lines (standard output by default).
    public init(
        keyProfile: KeyProfile = .default, allowInsecureKeyProfile: Bool = false,
        output: @escaping @Sendable (String) -> Void = { print($0) }
    ) {
        self.output = output
        self.keyProfile = keyProfile
        self.allowInsecureKeyProfile = allowInsecureKeyProfile
    }

    /// Runs the story against the sync server at `server` (an empty one, with soft delete on).
    /// The device stores live in a new temporary directory, removed at the end.
    /// - Parameter server: the server's URL.
    /// - Returns: `true` only if every step held.
    /// - Throws: a store, key or sync error that stopped the story.
    public func run(server: URL) async throws -> Bool {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ciphersync-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await story(server: server, directory: directory)
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
