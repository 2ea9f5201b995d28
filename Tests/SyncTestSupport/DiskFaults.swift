public import Foundation

/// `Tests/Tools/fault_shim.c` built into a shared library for `LD_PRELOAD`: `fsync`/`fdatasync`
/// or `write`/`pwrite` fail with EIO for the files whose path contains a given text.
public struct FaultShim: Sendable {
    /// The built library.
    public let library: URL

    /// Builds the shim into `directory` with the system C compiler.
    public static func build(into directory: URL) throws -> FaultShim {
        let source = repositoryRoot.appendingPathComponent("Tests/Tools/fault_shim.c")
        let library = directory.appendingPathComponent("fault_shim.so")
        let result = try runProgram("/usr/bin/cc", ["-shared", "-fPIC", "-O1", "-o", library.path, source.path, "-ldl"])
        guard result.status == 0 else { throw DiskFaultError("cc failed: \(result.error)") }
        return FaultShim(library: library)
    }

    /// The environment that makes the syncs of files whose path contains `text` fail with EIO.
    public func failingSyncs(of text: String) -> [String: String?] {
        ["LD_PRELOAD": library.path, "CIPHERSYNC_TEST_FSYNC_EIO": text]
    }

    /// The environment that makes the writes to files whose path contains `text` fail with EIO.
    public func failingWrites(to text: String) -> [String: String?] {
        ["LD_PRELOAD": library.path, "CIPHERSYNC_TEST_WRITE_EIO": text]
    }
}

/// A small file system of its own (tmpfs), mounted for one test on a new temporary directory:
/// full disks and read-only media. Needs root (the tests run as root); ``unmount()`` in every
/// path (a `defer`).
public final class SmallDisk: Sendable {
    /// The mount point.
    public let url: URL
    private let directory: TemporaryDirectory

    /// Mounts a tmpfs of `bytes` (rounded up to pages by the kernel), mode 0700.
    public init(bytes: Int) throws {
        directory = try TemporaryDirectory(prefix: "ciphersync-disk")
        url = directory.url
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", url.path])
    }

    /// Unmounts and removes the mount point (lazily if a file is still open).
    public func unmount() {
        if (try? Self.run("/bin/umount", [url.path])) == nil { try? Self.run("/bin/umount", ["-l", url.path]) }
        directory.remove()
    }

    /// The bytes still free.
    public var freeBytes: Int64 {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { return 0 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Copies everything in `directory` (files and subdirectories, same names) into the disk.
    public func copy(contentsOf directory: URL) throws {
        for entry in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
            try FileManager.default.copyItem(at: entry, to: url.appendingPathComponent(entry.lastPathComponent))
        }
    }

    /// Fills the disk with a file of its own (`filler`) until `free` bytes (a multiple of 4 KiB) are left.
    public func fill(leaving free: Int64) throws {
        let filler = url.appendingPathComponent("filler")
        let fd = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw DiskFaultError("cannot create the filler") }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        while block.withUnsafeBytes({ Foundation.write(fd, $0.baseAddress, $0.count) }) > 0 {}
        var size = stat()
        fstat(fd, &size)
        close(fd)
        guard truncate(filler.path, max(0, off_t(size.st_size) - off_t(free))) == 0 else { throw DiskFaultError("cannot shrink the filler") }
    }

    /// Removes the filler of ``fill(leaving:)``.
    public func removeFiller() {
        try? FileManager.default.removeItem(at: url.appendingPathComponent("filler"))
    }

    /// Makes the file system read-only (read-only media), or writable again.
    public func setReadOnly(_ readOnly: Bool) throws {
        try Self.run("/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", url.path])
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let result = try runProgram(tool, arguments)
        guard result.status == 0 else { throw DiskFaultError("\(tool) \(arguments.joined(separator: " ")): \(result.error)") }
    }
}

/// A fault could not be set up.
public struct DiskFaultError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
