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

/// Every regular file under `directory`, subdirectories included, by path relative to it
/// (`todo.db`, `todo.db.attachments/….csat`), sorted.
public func filePaths(under directory: URL) throws -> [String] {
    try FileManager.default.subpathsOfDirectory(atPath: directory.path).filter { path in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory.appendingPathComponent(path).path, isDirectory: &isDirectory)
            && !isDirectory.boolValue
    }.sorted()
}

/// Every regular file under `directory`, subdirectories included.
public func regularFiles(under directory: URL) throws -> [URL] {
    try filePaths(under: directory).map { directory.appendingPathComponent($0) }
}

/// The bytes of every file under `directory` (subdirectories included) by path relative to it,
/// to show that something changed nothing.
public func fileContents(in directory: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for path in try filePaths(under: directory) {
        files[path] = try Data(contentsOf: directory.appendingPathComponent(path))
    }
    return files
}

extension TemporaryDirectory {
    /// The bytes of every file under the directory (subdirectories included), by relative path.
    public func contents() throws -> [String: Data] {
        try fileContents(in: url)
    }

    /// Every file under the directory, subdirectories included.
    public func fileURLs() throws -> [URL] {
        try regularFiles(under: url)
    }
}
