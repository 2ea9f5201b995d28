public import Foundation

extension KeyEnvelope {
    /// The largest envelope file read; anything bigger is not an envelope.
    static let maximumFileSize = 64 * 1024

    /// Reads and checks an envelope file: shape, format, version and checksum. The MAC is checked
    /// when it is unlocked.
    ///
    /// - Throws: ``KeyError/keyMaterialMissing`` when the file is absent or unreadable,
    ///   ``KeyError/envelopeCorrupt(_:)`` or ``KeyError/unsupportedEnvelopeVersion(_:)``.
    public static func read(from url: URL) throws(KeyError) -> KeyEnvelope {
        guard let handle = try? FileHandle(forReadingFrom: url) else { throw .keyMaterialMissing }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maximumFileSize + 1) ?? Data() else { throw .keyMaterialMissing }
        guard data.count <= maximumFileSize else { throw .envelopeCorrupt("file too large") }
        return try decode(data)
    }

    /// Decodes and checks envelope JSON.
    public static func decode(_ data: Data) throws(KeyError) -> KeyEnvelope {
        struct Header: Decodable {
            var format: String?
            var version: Int?
            var state: String?
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw .envelopeCorrupt("not a key envelope")
        }
        guard header.format == formatName else { throw .envelopeCorrupt("not a key envelope") }
        guard header.version == currentVersion else { throw .unsupportedEnvelopeVersion(header.version ?? 0) }
        guard header.state != ShreddedEnvelope.state else { throw .shredded }
        guard let envelope = try? JSONDecoder().decode(KeyEnvelope.self, from: data) else {
            throw .envelopeCorrupt("missing or invalid fields")
        }
        let digest = try KeyDerivation.sha256(try envelope.canonicalBytes()).map { String(format: "%02x", $0) }.joined()
        guard digest == envelope.digest else { throw .envelopeCorrupt("checksum mismatch") }
        guard !envelope.slots.isEmpty, Set(envelope.slots.map(\.id)).count == envelope.slots.count else {
            throw .envelopeCorrupt("invalid slots")
        }
        guard envelope.cipher == .current else { throw .envelopeCorrupt("unsupported database profile") }
        guard (envelope.state == .rotating) == (envelope.pendingWrappedDataKey != nil) else {
            throw .envelopeCorrupt("inconsistent rotation state")
        }
        return envelope
    }

    /// The envelope as the bytes written to its file (JSON, sorted keys, one trailing newline).
    public func encoded() throws(KeyError) -> Data {
        var data = try Self.encode(self)
        data.append(0x0A)
        return data
    }

    /// Writes the envelope atomically: a temporary file (mode 0600) in the same directory,
    /// fsync, rename over `url`, fsync of the directory. A crash leaves the old or the new file,
    /// never a mix.
    public func write(to url: URL) throws(KeyError) {
        try Self.writeAtomically(try encoded(), to: url)
    }

    /// Writes `data` to `url` atomically: a temporary file (mode 0600) in the same directory,
    /// fsync, rename over `url`, fsync of the directory.
    static func writeAtomically(_ data: Data, to url: URL) throws(KeyError) {
        let directory = url.deletingLastPathComponent().path
        let temporary = url.path + ".tmp-\(UUID().uuidString.prefix(8))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .writeFailed(errorNumber: errno) }
        // The error number of the step that failed, read right after it (a later call may change `errno`).
        var failure: Int32? = data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let n = Foundation.write(fd, base + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        if failure == nil, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == nil { failure = errno }
        if failure == nil, rename(temporary, url.path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw .writeFailed(errorNumber: failure)
        }
        let dirFD = open(directory, O_RDONLY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            _ = close(dirFD)
        }
    }
}
