package import Foundation

/// An open file descriptor with the few POSIX calls the attachment files need: exclusive
/// creation (mode 0600), appends, positioned reads, `fsync`, rename and directory sync. Errors
/// come back as ``AttachmentFileError/io(_:)`` with the system's message.
package final class RawFile: @unchecked Sendable {
    /// The descriptor; -1 once closed.
    private var descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }
    }

    /// Creates a new file (never an existing one) for writing, mode 0600.
    package static func create(_ url: URL) throws(AttachmentFileError) -> RawFile {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("create") }
        return RawFile(descriptor: fd)
    }

    /// Opens an existing file for reading.
    package static func openForReading(_ url: URL) throws(AttachmentFileError) -> RawFile {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open") }
        return RawFile(descriptor: fd)
    }

    /// Opens an existing file for writing at its end, once it is cut to `length` bytes.
    package static func openForAppending(_ url: URL, truncatingTo length: Int64) throws(AttachmentFileError) -> RawFile {
        let fd = open(url.path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open") }
        let file = RawFile(descriptor: fd)
        guard ftruncate(fd, off_t(length)) == 0 else { throw failure("truncate") }
        guard lseek(fd, 0, SEEK_END) >= 0 else { throw failure("seek") }
        return file
    }

    /// The file's size in bytes.
    package func size() throws(AttachmentFileError) -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.failure("stat") }
        return Int64(info.st_size)
    }

    /// Writes all of `bytes` at the end of what was written.
    package func append(_ bytes: [UInt8]) throws(AttachmentFileError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(descriptor, raw.baseAddress.map { $0 + done }, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Self.failure("write") }
            done += n
        }
    }

    /// Reads up to `count` bytes at `offset` (fewer only at the end of the file).
    package func read(at offset: Int64, count: Int) throws(AttachmentFileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw Self.failure("read") }
            if n == 0 { break }
            done += n
        }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }

    /// Flushes the file to the disk and closes it.
    package func syncAndClose() throws(AttachmentFileError) {
        guard fsync(descriptor) == 0 else { throw Self.failure("fsync") }
        let fd = descriptor
        descriptor = -1
        guard close(fd) == 0 else { throw Self.failure("close") }
    }

    /// Closes the file (if open) and removes it.
    package func remove(_ url: URL) {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = -1
        _ = unlink(url.path)
    }

    /// Renames `source` over `destination` (atomic on one file system).
    package static func rename(_ source: URL, to destination: URL) throws(AttachmentFileError) {
        guard Foundation.rename(source.path, destination.path) == 0 else { throw failure("rename") }
    }

    /// Flushes the directory holding `url`, so that a rename or a removal in it is durable.
    package static func syncDirectory(of url: URL) throws(AttachmentFileError) {
        let fd = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("open directory") }
        defer { _ = close(fd) }
        guard fsync(fd) == 0 else { throw failure("fsync directory") }
    }

    /// The error for a failed call, with `errno`'s message.
    private static func failure(_ operation: String) -> AttachmentFileError {
        .io("\(operation): \(String(cString: strerror(errno)))")
    }
}
