import Foundation

/// A fresh directory (mode 0700) under the system temp directory, removed by ``remove()``.
///
/// Each test makes its own, so no two tests share a database file.
public struct TemporaryDirectory: Sendable {
    /// The directory's URL.
    public let url: URL

    /// Creates a new empty directory whose name starts with `prefix`.
    public init(prefix: String = "ciphersync") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The URL of `name` inside the directory.
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String {
        file(name).path
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
