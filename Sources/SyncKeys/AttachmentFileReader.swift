package import Foundation
import Synchronization

/// Reads an encrypted attachment file (``AttachmentFormat``) at any offset, one segment at a
/// time: no more than a segment of plaintext is held in memory.
///
/// Opening checks the header, the file's length and the last segment (which holds the content
/// length), so a truncated or foreign file is refused at once; every later read checks the tags
/// of the segments it decrypts, and ``verify()`` checks them all. Safe to share: reads take turns.
package final class AttachmentFileReader: Sendable {
    private struct State: ~Copyable {
        var cipher: SegmentCipher
        var cachedIndex = -1
        /// The plaintext of the segment decrypted last (wiped when replaced and at the end).
        var cached: [UInt8] = []

        mutating func cache(_ plain: [UInt8], index: Int) {
            SecretBytes.wipe(contentsOf: cached)
            cached = plain
            cachedIndex = index
        }

        deinit { SecretBytes.wipe(contentsOf: cached) }
    }

    private let file: RawFile
    private let header: AttachmentFormat.Header
    private let segments: Int
    private let lastPlainLength: Int
    private let state: Mutex<State>
    /// The content length in bytes.
    package let contentLength: Int64

    /// Opens the file at `url` with the attachment's key.
    ///
    /// - Parameters:
    ///   - url: The encrypted file.
    ///   - key: The attachment's 32-byte key.
    /// - Throws: ``AttachmentFileError``: ``AttachmentFileError/truncated`` for a short file,
    ///   ``AttachmentFileError/segmentAuthenticationFailed(segment:)`` for a changed last segment
    ///   or header, and the header's own cases.
    package init(url: URL, key: SecretBytes) throws(AttachmentFileError) {
        guard key.count == AttachmentFormat.keyLength, let cipher = try? SegmentCipher(key: key, encrypting: false) else {
            throw .keyUnavailable
        }
        file = try RawFile.openForReading(url)
        let fileSize = try file.size()
        header = try AttachmentFormat.Header(parsing: try file.read(at: 0, count: AttachmentFormat.headerLength))
        let sealedSegment = Int64(header.segmentSize + AttachmentFormat.tagLength)
        let body = fileSize - Int64(AttachmentFormat.headerLength)
        guard body > 0 else { throw .truncated }
        let count = (body + sealedSegment - 1) / sealedSegment
        let lastPlain = Int(body - (count - 1) * sealedSegment) - AttachmentFormat.tagLength
        // A cut inside a segment leaves a last segment that is not a whole number of padding units.
        guard lastPlain >= header.granularity, lastPlain % header.granularity == 0, count <= Int64(UInt32.max) else {
            throw .truncated
        }
        segments = Int(count)
        lastPlainLength = lastPlain
        let sealed = try file.read(at: Self.offset(of: segments - 1, header: header), count: lastPlain + AttachmentFormat.tagLength)
        guard sealed.count == lastPlain + AttachmentFormat.tagLength else { throw .truncated }
        guard let last = Self.open(sealed, index: segments - 1, final: true, header: header, cipher: cipher) else {
            throw Self.diagnose(sealed, at: segments - 1, segments: segments, header: header, cipher: cipher)
        }
        let trailer = last.suffix(AttachmentFormat.trailerLength).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        SecretBytes.wipe(contentsOf: last)
        let padded = Int64(segments - 1) * Int64(header.segmentSize) + Int64(lastPlain)
        guard trailer <= UInt64(Int64.max),
            AttachmentFormat.paddedLength(Int64(trailer), granularity: header.granularity) == padded
        else { throw .malformedPadding }
        contentLength = Int64(trailer)
        state = Mutex(State(cipher: cipher))
    }

    /// Where segment `index` starts in the file.
    private static func offset(of index: Int, header: AttachmentFormat.Header) -> Int64 {
        Int64(AttachmentFormat.headerLength) + Int64(index) * Int64(header.segmentSize + AttachmentFormat.tagLength)
    }

    /// Up to `count` content bytes from `offset` (fewer only at the end; none past it).
    ///
    /// - Throws: ``AttachmentFileError`` for a segment that fails its tag or a read that fails.
    package func read(at offset: Int64, count: Int) throws(AttachmentFileError) -> [UInt8] {
        guard offset >= 0, count > 0, offset < contentLength else { return [] }
        let end = min(offset + Int64(count), contentLength)
        let size = Int64(header.segmentSize)
        var result: [UInt8] = []
        result.reserveCapacity(Int(end - offset))
        var position = offset
        while position < end {
            let index = Int(position / size)
            let plain = try decrypt(index)
            let start = Int(position - Int64(index) * size)
            let stop = Int(min(end - Int64(index) * size, Int64(plain.count)))
            result += plain[start..<stop]
            position = Int64(index) * size + Int64(stop)
        }
        return result
    }

    /// Checks the tag of every segment, in order (the whole chain: index, final flag and header).
    ///
    /// - Throws: The first ``AttachmentFileError`` found.
    package func verify() throws(AttachmentFileError) {
        for index in 0..<segments { SecretBytes.wipe(contentsOf: try decrypt(index, caching: false)) }
    }

    /// The plaintext of segment `index` (the last one with its padding), from the cache when it
    /// was the last one decrypted.
    private func decrypt(_ index: Int, caching: Bool = true) throws(AttachmentFileError) -> [UInt8] {
        let final = index == segments - 1
        let length = final ? lastPlainLength : header.segmentSize
        let offset = Self.offset(of: index, header: header)
        let header = header
        let result: Result<[UInt8], AttachmentFileError> = state.withLock { state in
            if caching && state.cachedIndex == index { return .success(state.cached) }
            do throws(AttachmentFileError) {
                let sealed = try file.read(at: offset, count: length + AttachmentFormat.tagLength)
                guard sealed.count == length + AttachmentFormat.tagLength else { return .failure(.truncated) }
                guard let plain = Self.open(sealed, index: index, final: final, header: header, cipher: state.cipher) else {
                    return .failure(Self.diagnose(sealed, at: index, segments: segments, header: header, cipher: state.cipher))
                }
                if caching { state.cache(plain, index: index) }
                return .success(plain)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The plaintext of `sealed` opened as segment `index`, or `nil` when its tag fails there.
    static func open(
        _ sealed: [UInt8], index: Int, final: Bool, header: AttachmentFormat.Header, cipher: borrowing SegmentCipher
    ) -> [UInt8]? {
        var plain = [UInt8](repeating: 0, count: sealed.count - AttachmentFormat.tagLength)
        let nonce = header.nonce(segment: index, final: final)
        let opened = sealed.withUnsafeBytes { input in
            plain.withUnsafeMutableBytes { output in (try? cipher.open(input, nonce: nonce, aad: header.bytes, into: output)) ?? false }
        }
        return opened ? plain : nil
    }

    /// Why a segment failed its tag at `index`: it authenticates at another place of this file
    /// (reordered; or, as a non-final last segment, the file was cut after it), or nowhere (changed,
    /// or from another file).
    private static func diagnose(
        _ sealed: [UInt8], at index: Int, segments: Int, header: AttachmentFormat.Header, cipher: borrowing SegmentCipher
    ) -> AttachmentFileError {
        if index == segments - 1, open(sealed, index: index, final: false, header: header, cipher: cipher) != nil {
            return .truncated
        }
        for other in 0..<segments where other != index {
            for final in [false, true] where open(sealed, index: other, final: final, header: header, cipher: cipher) != nil {
                return .segmentOutOfPlace(segment: index, belongsAt: other)
            }
        }
        return .segmentAuthenticationFailed(segment: index)
    }
}
