package import Foundation
import SyncKeys
package import SyncSQLite

/// The files of a store and the file-system steps of the key-maintenance procedures: the plain
/// header check, private file creation, side files, durable renames, directory syncs, and the
/// scratch files a re-encryption leaves when it is interrupted.
///
/// Package-internal: the store opens its database with these helpers, and
/// `SQLiteStore.isPlainDatabase(at:)` / `SQLiteStore.sideFiles(of:)` (SyncStore) are their public face.
package enum StoreFiles {
    /// The first 16 bytes of every plain SQLite database.
    static let plainHeader = Array("SQLite format 3\0".utf8)

    /// Whether the file at `url` starts with the plain SQLite header (an unencrypted database).
    package static func isPlainDatabase(at url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return Array(header) == plainHeader
    }

    /// The side files SQLite may leave beside a database.
    package static func sideFiles(of url: URL) -> [URL] {
        ["-wal", "-shm", "-journal"].map { URL(fileURLWithPath: url.path + $0) }
    }

    /// Creates an empty file with mode 0600 (so SQLite's `-wal`/`-shm` inherit 0600 too).
    ///
    /// - Throws: ``StoreError/fileSystem(_:)`` when the file exists or cannot be created.
    package static func createEmptyFile(at path: String) throws {
        let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError.fileSystem("Cannot create \(path): \(String(cString: strerror(errno)))")
        }
        _ = Foundation.close(fd)
    }

    /// The bytes an unprivileged process may still write in the file system holding `directory`.
    package static func freeBytes(in directory: URL) -> Int64? {
        var info = statvfs()
        guard statvfs(directory.path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// How to open the database at `url` for reading only without creating or changing a file:
    /// ``Connection/OpenMode/immutable`` when it has no `-wal` and no `-shm` (no connection has it
    /// open, and its log was emptied when the last one closed), so that SQLite needs neither;
    /// otherwise ``Connection/OpenMode/readOnly``, which reads the log another connection keeps.
    package static func readOnlyMode(of url: URL) -> Connection.OpenMode {
        sideFiles(of: url).prefix(2).contains { exists($0) } ? .readOnly : .immutable
    }

    /// The scratch file a re-encryption exports into, beside the database.
    package static func exportFile(of database: URL) -> URL {
        URL(fileURLWithPath: database.path + ".reencrypt")
    }

    /// A second name for a plaintext database while it is replaced, so it can be wiped afterwards.
    static func retiredPlaintextFile(of database: URL) -> URL {
        URL(fileURLWithPath: database.path + ".plaintext-old")
    }

    /// The scratch files of an interrupted re-encryption (the export and its side files).
    static func scratchFiles(of database: URL) -> [URL] {
        let export = exportFile(of: database)
        return [export] + StoreFiles.sideFiles(of: export)
    }

    /// The temporary key files a key-file write left when its process was killed before the
    /// rename (`<database>.keys.tmp-XXXXXXXX`, ``KeyEnvelope/write(to:)``): never a key file in use.
    static func interruptedKeyFiles(of database: URL) -> [URL] {
        let directory = database.deletingLastPathComponent()
        let prefix = KeyEnvelope.url(forDatabase: database).lastPathComponent + ".tmp-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(prefix) }.sorted().map { directory.appendingPathComponent($0) }
    }

    /// Whether a file (or a symbolic link) exists at `url`.
    static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// The size of the file at `url`, or `nil` when there is none.
    static func size(of url: URL) -> Int64? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Whether a regular file holding nothing but zero bytes (at most 1 MiB; sparse, say) exists
    /// at `url`.
    package static func isEmptyFile(_ url: URL) -> Bool {
        var info = stat()
        guard lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 1 << 20 else { return false }
        guard info.st_size > 0 else { return true }
        guard let data = FileManager.default.contents(atPath: url.path) else { return false }
        return data.allSatisfy { $0 == 0 }
    }

    /// The inode and device of the file at `url`, to tell two names of one file apart.
    static func identity(of url: URL) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Removes `url` if it exists.
    static func remove(_ url: URL) throws {
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw StoreError.fileSystem("Cannot remove \(url.path): \(String(cString: strerror(errno))).")
        }
    }

    /// Copies the bytes of `source` into the existing, empty file `destination` in the kernel
    /// (`sendfile`, or `read`/`write` where the file system does not support it), `chunk` bytes at
    /// a time, calling `progress` with the bytes copied so far after each chunk.
    ///
    /// - Throws: ``CopyError/outOfSpace`` when the disk is full (the caller knows what the copy is
    ///   for, and says so); ``StoreError/fileSystem(_:)`` for any other failure.
    static func copyContents(
        of source: URL, into destination: URL, chunk: Int, progress: (Int64) -> Void
    ) throws {
        let input = Foundation.open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw StoreError.fileSystem("Cannot open \(source.path): \(String(cString: strerror(errno))).")
        }
        defer { _ = Foundation.close(input) }
        let output = Foundation.open(destination.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard output >= 0 else {
            throw StoreError.fileSystem("Cannot open \(destination.path): \(String(cString: strerror(errno))).")
        }
        defer { _ = Foundation.close(output) }
        var info = stat()
        guard fstat(input, &info) == 0 else {
            throw StoreError.fileSystem("Cannot read \(source.path): \(String(cString: strerror(errno))).")
        }
        let size = Int64(info.st_size)
        var copied: Int64 = 0
        var inKernel = true
        var buffer: [UInt8] = []
        while copied < size {
            let count = Int(min(Int64(chunk), size - copied))
            var done = 0
            while done < count {
                var moved: Int
                if inKernel {
                    moved = sendfile(output, input, nil, count - done)
                    if moved < 0, errno == EINVAL || errno == ENOSYS {
                        // A file system that cannot copy in the kernel: copy through a buffer.
                        inKernel = false
                        continue
                    }
                } else {
                    if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 1 << 20) }
                    let wanted = min(count - done, buffer.count)
                    moved = buffer.withUnsafeMutableBytes { Foundation.pread(input, $0.baseAddress, wanted, off_t(copied) + off_t(done)) }
                    if moved > 0 {
                        // A short write is taken as it is: the next read starts where it stopped.
                        let read = moved
                        moved = buffer.withUnsafeBytes { Foundation.write(output, $0.baseAddress, read) }
                    }
                }
                if moved < 0, errno == EINTR { continue }
                guard moved > 0 else {
                    let code = moved < 0 ? errno : EIO
                    if isOutOfSpace(code) { throw CopyError.outOfSpace }
                    throw StoreError.fileSystem("Cannot copy \(source.path): \(String(cString: strerror(code))).")
                }
                done += moved
            }
            copied += Int64(count)
            progress(copied)
        }
    }

    /// A copy that stopped because the disk is full (the caller words the message).
    enum CopyError: Error {
        case outOfSpace
    }

    /// Flushes the file at `url` to the disk.
    static func sync(_ url: URL) throws {
        let fd = Foundation.open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError.fileSystem("Cannot open \(url.path): \(String(cString: strerror(errno))).")
        }
        defer { _ = Foundation.close(fd) }
        guard fsync(fd) == 0 else {
            throw StoreError.fileSystem("Cannot flush \(url.path) to disk: \(String(cString: strerror(errno))).")
        }
    }

    /// Flushes the directory holding `url`, so renames and removals in it are durable.
    static func syncDirectory(of url: URL) throws {
        try sync(url.deletingLastPathComponent())
    }

    /// Renames `source` over `destination` in one atomic step (same directory).
    static func rename(_ source: URL, over destination: URL) throws {
        guard Foundation.rename(source.path, destination.path) == 0 else {
            throw StoreError.fileSystem(
                "Cannot rename \(source.path) to \(destination.path): \(String(cString: strerror(errno))).")
        }
    }

    /// Gives `source` a second name `link` (a hard link).
    static func link(_ source: URL, as link: URL) throws {
        guard Foundation.link(source.path, link.path) == 0 else {
            throw StoreError.fileSystem("Cannot link \(source.path): \(String(cString: strerror(errno))).")
        }
    }

    /// Overwrites the file at `url` with zeros, flushes it and removes it.
    ///
    /// Best effort against recovery from the disk: a journaling or copy-on-write file system, or
    /// an SSD, may keep older copies of the blocks. Used for plaintext that encryption replaced.
    ///
    /// - Throws: ``StoreError/ioError(_:)`` (or ``StoreError/fileSystem(_:)``) when the zeros
    ///   could not be written or flushed: the file is removed all the same, so that its name no
    ///   longer leads to the plaintext, and the error says that its blocks were not overwritten.
    static func wipeAndRemove(_ url: URL) throws {
        let failure = overwriteWithZeros(url)
        try remove(url)
        guard let failure else { return }
        let reason =
            "The old plaintext copy \(url.path) could not be overwritten with zeros (\(String(cString: strerror(failure)))) and was "
            + "removed without it: its content may still be readable on the disk. Check the disk; to be sure, wipe its free space."
        throw failure == EIO ? StoreError.ioError(reason) : StoreError.fileSystem(reason)
    }

    /// Writes zeros over every byte of the file at `url` and flushes them.
    ///
    /// - Returns: The error number of the step that failed, or `nil`.
    private static func overwriteWithZeros(_ url: URL) -> Int32? {
        let fd = Foundation.open(url.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return errno == ENOENT ? nil : errno }
        defer { _ = Foundation.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return errno }
        let zeros = [UInt8](repeating: 0, count: 64 * 1024)
        var remaining = Int64(info.st_size)
        while remaining > 0 {
            let count = Int(min(remaining, Int64(zeros.count)))
            let written = zeros.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            remaining -= Int64(written)
        }
        return fsync(fd) == 0 ? nil : errno
    }

    /// Maps a failed write to the message a technician can act on when the disk is full.
    static func isOutOfSpace(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EFBIG
    }
}
