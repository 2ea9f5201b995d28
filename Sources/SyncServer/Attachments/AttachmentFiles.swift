import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations of ``DirectoryAttachmentContent``, each a blocking system call or a few:
/// run on a thread pool's thread, never on one that runs tasks.
struct AttachmentFiles: Sendable {
    /// The directory.
    let directory: String

    func held(_ key: AttachmentKey) throws -> HeldContent {
        let name = try key.storedName
        if let size = try fileSize(complete(name)) { return HeldContent(count: size, complete: true) }
        return HeldContent(count: try fileSize(partial(name)) ?? 0, complete: false)
    }

    func append(_ key: AttachmentKey, _ bytes: ByteBuffer, at offset: Int64) throws {
        try makeDirectory()
        let path = partial(try key.storedName)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AttachmentFileError("open", path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw AttachmentFileError("stat", path) }
        guard Int64(status.st_size) == offset else { throw AttachmentError.offsetMoved(Int64(status.st_size)) }
        var position = offset
        try bytes.withUnsafeReadableBytes { raw in
            var done = 0
            while done < raw.count, let base = raw.baseAddress {
                let written = pwrite(descriptor, base + done, raw.count - done, off_t(position))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw AttachmentFileError("write", path) }
                done += written
                position += Int64(written)
            }
        }
    }

    func flush(_ key: AttachmentKey) throws {
        let path = partial(try key.storedName)
        guard try fileSize(path) != nil else { return }
        try sync(path)
        try sync(directory)
    }

    func truncate(_ key: AttachmentKey, to count: Int64) throws {
        let path = partial(try key.storedName)
        guard let size = try fileSize(path), size > count else { return }
        if count == 0 {
            try unlinkIfPresent(path)
        } else {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw AttachmentFileError("open", path) }
            defer { close(descriptor) }
            guard ftruncate(descriptor, off_t(count)) == 0, fsync(descriptor) == 0 else { throw AttachmentFileError("truncate", path) }
        }
    }

    func complete(_ key: AttachmentKey) throws {
        let name = try key.storedName
        try makeDirectory()
        // An empty content has had no append: its file is made here.
        let descriptor = open(partial(name), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AttachmentFileError("open", partial(name)) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw AttachmentFileError("fsync", partial(name)) }
        guard rename(partial(name), complete(name)) == 0 else { throw AttachmentFileError("rename", partial(name)) }
        try sync(directory)
    }

    func read(_ key: AttachmentKey, at offset: Int64, limit: Int) throws -> ByteBuffer {
        let name = try key.storedName
        var descriptor = open(complete(name), O_RDONLY | O_CLOEXEC)
        if descriptor < 0, errno == ENOENT { descriptor = open(partial(name), O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else {
            if errno == ENOENT { return ByteBuffer() }
            throw AttachmentFileError("open", complete(name))
        }
        defer { close(descriptor) }
        var buffer = ByteBuffer()
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: limit) { raw in
            while true {
                let count = pread(descriptor, raw.baseAddress, limit, off_t(offset))
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { throw AttachmentFileError("read", complete(name)) }
                return count
            }
        }
        return buffer
    }

    /// Renames the content's files to `<file>.removed` (and syncs the directory).
    func stageRemoval(_ key: AttachmentKey) throws {
        let name = try key.storedName
        var moved = false
        for file in [complete(name), partial(name)] {
            guard rename(file, removed(file)) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { continue }
                throw AttachmentFileError("rename", file)
            }
            moved = true
        }
        if moved { try sync(directory) }
    }

    /// Unlinks the `.removed` files.
    func finishRemoval(_ key: AttachmentKey) throws {
        let name = try key.storedName
        try unlinkIfPresent(removed(complete(name)))
        try unlinkIfPresent(removed(partial(name)))
    }

    /// Renames the `.removed` files back.
    func restoreRemoved(_ key: AttachmentKey) throws {
        let name = try key.storedName
        var moved = false
        for file in [complete(name), partial(name)] {
            guard rename(removed(file), file) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { continue }
                throw AttachmentFileError("rename", removed(file))
            }
            moved = true
        }
        if moved { try sync(directory) }
    }

    // MARK: files

    private func complete(_ name: String) -> String { "\(directory)/\(name)" }
    private func partial(_ name: String) -> String { "\(directory)/\(name).part" }
    private func removed(_ file: String) -> String { "\(file).removed" }

    private func makeDirectory() throws {
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw AttachmentFileError("mkdir", directory) }
    }

    /// The size of the file at `path`, `nil` when there is none.
    private func fileSize(_ path: String) throws -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw AttachmentFileError("stat", path)
        }
        return Int64(status.st_size)
    }

    private func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AttachmentFileError("open", path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw AttachmentFileError("fsync", path) }
    }

    private func unlinkIfPresent(_ path: String) throws {
        guard unlink(path) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return }
            throw AttachmentFileError("unlink", path)
        }
        try sync(directory)
    }
}

/// A file operation of the attachment directory failed (the server answers 500 and logs it).
struct AttachmentFileError: Error, CustomStringConvertible {
    let operation: String
    let path: String
    let code: Int32

    init(_ operation: String, _ path: String) {
        self.operation = operation
        self.path = path
        self.code = errno
    }

    var description: String { "\(operation) of \(path) failed: \(String(cString: strerror(code)))" }
}
