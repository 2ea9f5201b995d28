package import Foundation

/// Writes an encrypted attachment file (``AttachmentFormat``) as the content streams in: at most
/// one segment of plaintext is held in memory, each full segment is sealed and written at once.
///
/// The file is made new (mode 0600, never an existing file) at a temporary path;
/// ``commit(to:)`` pads and seals the last segment, flushes the file to the disk, renames it to
/// its final name and flushes the directory. ``discard()`` (or dropping an unfinished writer)
/// removes the temporary file. Use from one task at a time.
package final class AttachmentFileWriter {
    private let cipher: SegmentCipher
    private let header: AttachmentFormat.Header
    private let file: RawFile
    private let temporaryURL: URL
    private var buffer: [UInt8]
    private var segment = 0
    private var finished = false
    /// The content bytes written so far.
    package private(set) var contentLength: Int64 = 0

    /// Creates the temporary file and writes the header.
    ///
    /// - Parameters:
    ///   - temporaryURL: A path where no file exists, in the final file's directory.
    ///   - key: The attachment's 32-byte key.
    ///   - noncePrefix: The header's nonce prefix; `nil` draws 7 random bytes (only known-answer
    ///     tests pass one).
    /// - Throws: ``AttachmentFileError/io(_:)`` when the file cannot be made,
    ///   ``AttachmentFileError/keyUnavailable`` for a key of the wrong length.
    package init(temporaryURL: URL, key: SecretBytes, noncePrefix: [UInt8]? = nil) throws(AttachmentFileError) {
        guard key.count == AttachmentFormat.keyLength, noncePrefix.map({ $0.count == AttachmentFormat.noncePrefixLength }) ?? true
        else { throw .keyUnavailable }
        guard let prefix = try? noncePrefix ?? RandomBytes.make(AttachmentFormat.noncePrefixLength) else { throw .io("random nonce prefix") }
        header = AttachmentFormat.Header(
            segmentShift: AttachmentFormat.segmentShift, paddingShift: AttachmentFormat.paddingShift, noncePrefix: prefix)
        file = try RawFile.create(temporaryURL)
        self.temporaryURL = temporaryURL
        buffer = []
        buffer.reserveCapacity(header.segmentSize + header.granularity)
        do {
            try file.append(header.bytes)
        } catch {
            file.remove(temporaryURL)
            throw error
        }
        cipher = try Self.makeCipher(key, removing: file, at: temporaryURL)
    }

    /// Reopens the temporary file of a writer that was suspended (``suspend()``) to go on
    /// writing after the `kept` content bytes of its first segments: each of them is decrypted, checked
    /// (index, non-final flag, header) and handed to `prefix` in order, then the file is cut
    /// after them.
    ///
    /// - Parameters:
    ///   - temporaryURL: The suspended writer's temporary file.
    ///   - key: The attachment's 32-byte key.
    ///   - kept: The content length ``suspend()`` returned (whole segments).
    ///   - prefix: Sees the plaintext of each kept segment (the buffer is wiped after the call).
    /// - Throws: ``AttachmentFileError``: ``AttachmentFileError/truncated`` for a file shorter than
    ///   the segments or a length that is not whole segments,
    ///   ``AttachmentFileError/segmentAuthenticationFailed(segment:)`` for a changed
    ///   segment, ``AttachmentFileError/keyUnavailable`` for another key. The file is left as it was.
    package init(
        resuming temporaryURL: URL, key: SecretBytes, kept: Int64, prefix: ([UInt8]) throws(AttachmentFileError) -> Void
    ) throws(AttachmentFileError) {
        guard key.count == AttachmentFormat.keyLength, let opener = try? SegmentCipher(key: key, encrypting: false) else {
            throw .keyUnavailable
        }
        let reader = try RawFile.openForReading(temporaryURL)
        let header = try AttachmentFormat.Header(parsing: try reader.read(at: 0, count: AttachmentFormat.headerLength))
        guard kept >= 0, kept % Int64(header.segmentSize) == 0 else { throw .truncated }
        let segments = Int(kept / Int64(header.segmentSize))
        let sealedSegment = header.segmentSize + AttachmentFormat.tagLength
        let length = Int64(AttachmentFormat.headerLength) + Int64(segments) * Int64(sealedSegment)
        guard try reader.size() >= length else { throw .truncated }
        for index in 0..<segments {
            let offset = Int64(AttachmentFormat.headerLength) + Int64(index) * Int64(sealedSegment)
            let sealed = try reader.read(at: offset, count: sealedSegment)
            guard sealed.count == sealedSegment else { throw .truncated }
            guard let plain = AttachmentFileReader.open(sealed, index: index, final: false, header: header, cipher: opener) else {
                throw .segmentAuthenticationFailed(segment: index)
            }
            defer { SecretBytes.wipe(contentsOf: plain) }
            try prefix(plain)
        }
        self.header = header
        self.temporaryURL = temporaryURL
        file = try RawFile.openForAppending(temporaryURL, truncatingTo: length)
        buffer = []
        buffer.reserveCapacity(header.segmentSize + header.granularity)
        segment = segments
        contentLength = Int64(segments) * Int64(header.segmentSize)
        guard let cipher = try? SegmentCipher(key: key, encrypting: true) else { throw .keyUnavailable }
        self.cipher = cipher
    }

    deinit {
        SecretBytes.wipe(contentsOf: buffer)
        if !finished { file.remove(temporaryURL) }
    }

    /// Stops writing and keeps what is sealed: the header and every full segment written so far,
    /// flushed to the disk, at the temporary path (never the buffered plaintext of the segment
    /// under way, which is wiped). ``init(resuming:key:kept:prefix:)`` goes on from there.
    ///
    /// - Returns: The content length kept (whole segments).
    /// - Throws: ``AttachmentFileError/io(_:)``; the temporary file is removed.
    package func suspend() throws(AttachmentFileError) -> Int64 {
        buffer.withUnsafeMutableBytes { SecretBytes.wipe($0) }
        buffer.removeAll()
        finished = true
        do {
            try file.syncAndClose()
        } catch {
            file.remove(temporaryURL)
            throw error
        }
        return Int64(segment) * Int64(header.segmentSize)
    }

    /// The segment cipher under `key`; on failure the temporary file is removed.
    private static func makeCipher(_ key: SecretBytes, removing file: RawFile, at url: URL) throws(AttachmentFileError) -> SegmentCipher {
        do {
            return try SegmentCipher(key: key, encrypting: true)
        } catch {
            file.remove(url)
            throw .keyUnavailable
        }
    }

    /// Appends content.
    ///
    /// - Parameter bytes: The next content bytes.
    /// - Throws: ``AttachmentFileError/io(_:)``.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(AttachmentFileError) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let take = min(header.segmentSize - buffer.count, rest.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            contentLength += Int64(take)
            // A full segment is never the last one: the padding always follows it.
            if buffer.count == header.segmentSize { try flush(count: buffer.count, final: false) }
        }
    }

    /// Appends content.
    ///
    /// - Parameter bytes: The next content bytes.
    /// - Throws: ``AttachmentFileError/io(_:)``.
    package func write(_ bytes: [UInt8]) throws(AttachmentFileError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(AttachmentFileError) in try write(raw) } }.get()
    }

    /// Pads and seals the end, flushes the file to the disk and renames it to `url`, then flushes
    /// the directory.
    ///
    /// - Parameter url: The final path (an existing file there is replaced).
    /// - Returns: The content length.
    /// - Throws: ``AttachmentFileError/io(_:)``; the temporary file is removed.
    @discardableResult
    package func commit(to url: URL) throws(AttachmentFileError) -> Int64 {
        do {
            try sealEnd()
            try file.syncAndClose()
            try RawFile.rename(temporaryURL, to: url)
        } catch {
            file.remove(temporaryURL)
            finished = true
            throw error
        }
        finished = true
        try RawFile.syncDirectory(of: url)
        return contentLength
    }

    /// Pads and seals the end and flushes the file; it stays at its temporary path (for a caller
    /// that renames it itself).
    ///
    /// - Returns: The content length.
    /// - Throws: ``AttachmentFileError/io(_:)``; the temporary file is removed.
    @discardableResult
    package func finish() throws(AttachmentFileError) -> Int64 {
        do {
            try sealEnd()
            try file.syncAndClose()
        } catch {
            file.remove(temporaryURL)
            finished = true
            throw error
        }
        finished = true
        return contentLength
    }

    /// Removes the temporary file (and wipes the plaintext buffered).
    package func discard() {
        SecretBytes.wipe(contentsOf: buffer)
        file.remove(temporaryURL)
        finished = true
    }

    private func sealEnd() throws(AttachmentFileError) {
        let padded = Int(AttachmentFormat.paddedLength(Int64(buffer.count), granularity: header.granularity))
        let length = UInt64(contentLength)
        buffer += [UInt8](repeating: 0, count: padded - buffer.count - AttachmentFormat.trailerLength)
        buffer += (0..<8).reversed().map { UInt8((length >> (UInt64($0) * 8)) & 0xff) }
        if buffer.count > header.segmentSize { try flush(count: header.segmentSize, final: false) }
        try flush(count: buffer.count, final: true)
    }

    /// Seals the first `count` buffered bytes as the next segment and writes it.
    private func flush(count: Int, final: Bool) throws(AttachmentFileError) {
        var sealed = [UInt8](repeating: 0, count: count + AttachmentFormat.tagLength)
        let nonce = header.nonce(segment: segment, final: final)
        let aad = header.bytes
        let result = buffer.withUnsafeBytes { plain in
            sealed.withUnsafeMutableBytes { out in
                Result { () throws(KeyError) in
                    try cipher.seal(UnsafeRawBufferPointer(rebasing: plain[0..<count]), nonce: nonce, aad: aad, into: out)
                }
            }
        }
        guard case .success = result else { throw .io("segment seal") }
        buffer.withUnsafeMutableBytes { SecretBytes.wipe(UnsafeMutableRawBufferPointer(rebasing: $0[0..<count])) }
        buffer.removeFirst(count)
        try file.append(sealed)
        segment += 1
    }
}
