/// The encrypted attachment file, format 1 (Keys/FORMAT.md §11): a 16-byte header, then the
/// padded content in fixed-size segments, each sealed with AES-256-GCM under the attachment's own
/// key with its own nonce and tag (the STREAM construction).
///
/// The nonce of segment `i` is the header's 7-byte prefix, `i` as a 32-bit big-endian number and
/// a final-segment flag (1 for the last segment, else 0); every segment's additional data is the
/// header. So a flipped byte, a truncation at any point, a segment moved to another place and a
/// segment from another file all fail a tag. The content is padded, before it is sealed, with
/// zeros and its length as a 64-bit big-endian number, to a multiple of the padding granularity:
/// the file's size tells the content's size only to that granularity.
package enum AttachmentFormat {
    /// The first four bytes of every file: `CSAT`.
    package static let magic: [UInt8] = Array("CSAT".utf8)
    /// The format version this build writes and reads.
    package static let version: UInt8 = 1
    /// The header length in bytes.
    package static let headerLength = 16
    /// The length of the nonce prefix in the header.
    package static let noncePrefixLength = 7
    /// The length of an attachment key.
    package static let keyLength = 32
    /// log2 of the plaintext bytes per segment this build writes: 64 KiB.
    package static let segmentShift: UInt8 = 16
    /// log2 of the padding granularity this build writes: 4 KiB.
    package static let paddingShift: UInt8 = 12
    /// The length of the content-length trailer at the end of the padded content.
    static let trailerLength = 8
    /// The per-segment tag length.
    package static let tagLength = SegmentCipher.tagLength

    /// The HKDF-SHA256 `info` of the key that wraps attachment keys, derived from the data key.
    static let wrapInfo = Array("ciphersync/v1/attachment-key-wrap".utf8)

    /// The parsed header of a file.
    struct Header: Equatable {
        var segmentShift: UInt8
        var paddingShift: UInt8
        var noncePrefix: [UInt8]

        var segmentSize: Int { 1 << Int(segmentShift) }
        var granularity: Int { 1 << Int(paddingShift) }

        /// The 16 header bytes (also every segment's additional data).
        var bytes: [UInt8] {
            AttachmentFormat.magic + [AttachmentFormat.version, segmentShift, paddingShift, 0] + noncePrefix + [0]
        }

        /// Parses and checks a header.
        init(parsing bytes: [UInt8]) throws(AttachmentFileError) {
            guard bytes.count == AttachmentFormat.headerLength else { throw .truncated }
            guard Array(bytes[0..<4]) == AttachmentFormat.magic else { throw .notAnAttachmentFile }
            guard bytes[4] == AttachmentFormat.version else { throw .unsupportedVersion(Int(bytes[4])) }
            let segment = bytes[5]
            let padding = bytes[6]
            guard (12...24).contains(segment), (12...segment).contains(padding), bytes[7] == 0, bytes[15] == 0 else {
                throw .malformedHeader
            }
            self.init(segmentShift: segment, paddingShift: padding, noncePrefix: Array(bytes[8..<15]))
        }

        init(segmentShift: UInt8, paddingShift: UInt8, noncePrefix: [UInt8]) {
            self.segmentShift = segmentShift
            self.paddingShift = paddingShift
            self.noncePrefix = noncePrefix
        }

        /// The nonce of segment `index`.
        func nonce(segment index: Int, final: Bool) -> [UInt8] {
            let i = UInt32(truncatingIfNeeded: index)
            return noncePrefix + [UInt8(i >> 24), UInt8((i >> 16) & 0xff), UInt8((i >> 8) & 0xff), UInt8(i & 0xff), final ? 1 : 0]
        }
    }

    /// The padded length of `contentLength` bytes of content.
    static func paddedLength(_ contentLength: Int64, granularity: Int) -> Int64 {
        let g = Int64(granularity)
        return (contentLength + Int64(trailerLength) + g - 1) / g * g
    }

    /// The size of the file that holds `contentLength` bytes, as this build writes it.
    ///
    /// - Parameter contentLength: The plaintext length.
    /// - Returns: The header, the padded content and one tag per segment.
    package static func fileSize(forContentLength contentLength: Int64) -> Int64 {
        let padded = paddedLength(contentLength, granularity: 1 << Int(paddingShift))
        let segment = Int64(1) << Int64(segmentShift)
        let segments = (padded + segment - 1) / segment
        return Int64(headerLength) + padded + segments * Int64(tagLength)
    }

    /// The key that wraps the attachment keys of a store: HKDF-SHA256 of the store's data key
    /// with no salt and the info `ciphersync/v1/attachment-key-wrap`.
    ///
    /// - Parameter dataKey: The store's 32-byte data key.
    /// - Returns: A 32-byte key-encryption key for ``KeyWrap`` (KWP).
    /// - Throws: ``KeyError``.
    package static func wrappingKey(dataKey: SecretBytes) throws(KeyError) -> SecretBytes {
        try KeyDerivation.hkdfSHA256(key: dataKey, salt: [], info: wrapInfo, length: 32)
    }

    /// A new random attachment key.
    ///
    /// - Returns: 32 bytes from OpenSSL's CSPRNG.
    /// - Throws: ``KeyError/cryptoFailure(_:)``.
    package static func newKey() throws(KeyError) -> SecretBytes {
        try SecretBytes.random(count: keyLength)
    }
}
