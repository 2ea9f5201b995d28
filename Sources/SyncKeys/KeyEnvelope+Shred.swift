public import Foundation

/// What is left of a key envelope after the store was shredded: no key, no wrapped key, no salt;
/// only the TPM objects that still have to be evicted (`Keys/FORMAT.md` §10).
public struct ShreddedEnvelope: Sendable, Equatable, Codable {
    /// The `state` of a shredded envelope.
    public static let state = "shredded"

    /// A TPM object named by a shredded envelope, to be evicted.
    public struct TPMObject: Sendable, Equatable, Codable {
        /// The persistent handle, `0x` and eight hex digits.
        public var handle: String
        /// The object's TPM Name, hex: only this object is evicted from that handle.
        public var name: String
    }

    /// Always ``KeyEnvelope/formatName``.
    public var format: String
    /// Always ``KeyEnvelope/currentVersion``.
    public var version: Int
    /// Always ``state``.
    public var state: String
    /// When the store was shredded.
    public var shreddedAt: String
    /// The TPM objects of the former TPM slots that are not known to be evicted yet.
    public var tpmObjects: [TPMObject]

    /// A shredded envelope for `envelope`, listing its TPM slots' objects.
    ///
    /// - Parameters:
    ///   - envelope: The envelope being shredded, or `nil` when it cannot be read.
    ///   - now: The time recorded.
    public init(replacing envelope: KeyEnvelope?, now: Date = Date()) {
        format = KeyEnvelope.formatName
        version = KeyEnvelope.currentVersion
        state = Self.state
        shreddedAt = KeyEnvelope.timestamp(now)
        tpmObjects = (envelope?.slots ?? []).compactMap { slot in
            slot.tpm.map { TPMObject(handle: $0.handle, name: $0.name) }
        }
    }

    /// The shredded envelope at `url`, or `nil` when the file is not one.
    public static func read(from url: URL) -> ShreddedEnvelope? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: KeyEnvelope.maximumFileSize), let value = try? JSONDecoder().decode(Self.self, from: data),
            value.format == KeyEnvelope.formatName, value.state == state
        else { return nil }
        return value
    }

    /// The JSON of this value: sorted keys, no whitespace.
    func json() throws(KeyError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { throw .envelopeCorrupt("cannot encode") }
        return data
    }

    /// Overwrites the envelope file at `url` **in place** with this value, padded with spaces to
    /// the file's length and a newline, then flushes it: the blocks that held the wrapped keys are
    /// rewritten, not only unlinked. A process killed meanwhile leaves the old file or the new one
    /// (one `pwrite` of at most 64 KiB).
    ///
    /// - Throws: ``KeyError/writeFailed(_:)``.
    public func overwrite(inPlace url: URL) throws(KeyError) {
        let fd = open(url.path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .writeFailed(errorNumber: errno) }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .writeFailed(errorNumber: errno) }
        var data = try json()
        let length = max(Int(info.st_size), data.count + 1)
        data.append(contentsOf: [UInt8](repeating: UInt8(ascii: " "), count: length - data.count - 1))
        data.append(0x0A)
        let written = data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        // A short write ran out of room beyond the file's old length: the disk is full.
        guard written == data.count else { throw .writeFailed(errorNumber: written < 0 ? errno : ENOSPC) }
        guard fsync(fd) == 0 else { throw .writeFailed(errorNumber: errno) }
    }

    /// Replaces the file at `url` with this value atomically (as ``KeyEnvelope/write(to:)``).
    ///
    /// - Throws: ``KeyError/writeFailed(_:)``.
    public func write(to url: URL) throws(KeyError) {
        var data = try json()
        data.append(0x0A)
        try KeyEnvelope.writeAtomically(data, to: url)
    }
}
