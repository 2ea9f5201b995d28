public import Foundation

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

/// The name and bytes of every file in `directory`, to show that something changed nothing.
public func fileContents(in directory: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
        files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
    }
    return files
}

extension TemporaryDirectory {
    /// The name and bytes of every file in the directory.
    public func contents() throws -> [String: Data] {
        try fileContents(in: url)
    }

    /// Every file in the directory.
    public func fileURLs() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
    }
}
