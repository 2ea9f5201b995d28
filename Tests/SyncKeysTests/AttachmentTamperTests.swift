import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// Damage to an encrypted attachment file is refused with its own typed error: a flipped byte,
/// a truncation (inside a segment or at a segment boundary), swapped segments, a segment spliced
/// in from another file, a foreign header, the wrong key.
@Suite struct AttachmentTamperTests {
    /// A file of three segments (150,000 bytes) in a fresh directory, and its bytes.
    struct Fixture {
        let directory: TemporaryDirectory
        let url: URL
        let key: SecretBytes
        let bytes: [UInt8]

        init() throws {
            directory = try TemporaryDirectory()
            url = directory.file("a.csat")
            key = try AttachmentFormat.newKey()
            try sealAttachment(randomBytes(150_000), to: url, key: key)
            bytes = try [UInt8](Data(contentsOf: url))
        }

        /// Writes `bytes` over the file and reads it all, returning the error.
        func error(reading bytes: [UInt8], key: SecretBytes? = nil) throws -> AttachmentFileError? {
            try Data(bytes).write(to: url)
            do {
                let reader = try AttachmentFileReader(url: url, key: key ?? self.key)
                try reader.verify()
                _ = try reader.read(at: 0, count: 150_000)
                return nil
            } catch {
                return error
            }
        }
    }

    /// Segment `i`'s sealed bytes (the last one shorter).
    static func segment(_ i: Int, of bytes: [UInt8]) -> ArraySlice<UInt8> {
        let start = 16 + i * (65_536 + 16)
        return bytes[start..<min(start + 65_536 + 16, bytes.count)]
    }

    @Test(arguments: [16, 100, 65_551, 65_552 + 16 + 5, 150_000])
    func aFlippedByteFailsItsSegment(_ offset: Int) throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var bytes = fixture.bytes
        bytes[offset] ^= 0x01
        let segment = (offset - 16) / (65_536 + 16)
        #expect(try exactly(fixture.error(reading: bytes), .segmentAuthenticationFailed(segment: segment)))
    }

    @Test func aFlippedHeaderByteFailsEverySegment() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var bytes = fixture.bytes
        bytes[9] ^= 0x80  // the nonce prefix
        #expect(try exactly(fixture.error(reading: bytes), .segmentAuthenticationFailed(segment: 2)))
        bytes = fixture.bytes
        bytes[0] = UInt8(ascii: "X")
        #expect(try fixture.error(reading: bytes) == .notAnAttachmentFile)
        bytes = fixture.bytes
        bytes[4] = 2
        #expect(try exactly(fixture.error(reading: bytes), .unsupportedVersion(2)))
        bytes = fixture.bytes
        bytes[5] = 30
        #expect(try fixture.error(reading: bytes) == .malformedHeader)
    }

    @Test(arguments: [1, 100, 4095, 20_496, 20_496 + 1, 20_496 + 65_552])
    func aTruncatedFileIsRefused(_ cut: Int) throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        // `cut` bytes off the end: inside the last segment (20,480 bytes and its tag), or whole
        // segments at a boundary.
        let bytes = Array(fixture.bytes.dropLast(cut))
        let error = try fixture.error(reading: bytes)
        #expect(error == .truncated, "cut \(cut): \(String(describing: error))")
    }

    @Test func anEmptyOrHeaderOnlyFileIsTruncated() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        #expect(try fixture.error(reading: []) == .truncated)
        #expect(try fixture.error(reading: Array(fixture.bytes.prefix(16))) == .truncated)
    }

    @Test func swappedSegmentsAreOutOfPlace() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let original = fixture.bytes
        let swapped = Array(original.prefix(16)) + Self.segment(1, of: original) + Self.segment(0, of: original) + Self.segment(2, of: original)
        #expect(try exactly(fixture.error(reading: swapped), .segmentOutOfPlace(segment: 0, belongsAt: 1)))
        // A segment repeated in place of another.
        let repeated = Array(original.prefix(16)) + Self.segment(0, of: original) + Self.segment(0, of: original) + Self.segment(2, of: original)
        #expect(try exactly(fixture.error(reading: repeated), .segmentOutOfPlace(segment: 1, belongsAt: 0)))
    }

    @Test func aSegmentSplicedFromAnotherFileFails() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        // Another file under the same key (another nonce prefix), and one under another key.
        for key in [fixture.key, try AttachmentFormat.newKey()] {
            let other = fixture.directory.file("other-\(UUID().uuidString).csat")
            try sealAttachment(randomBytes(150_000), to: other, key: key)
            let otherBytes = try [UInt8](Data(contentsOf: other))
            let spliced =
                Array(fixture.bytes.prefix(16)) + Self.segment(0, of: fixture.bytes) + Self.segment(1, of: otherBytes)
                + Self.segment(2, of: fixture.bytes)
            #expect(try exactly(fixture.error(reading: spliced), .segmentAuthenticationFailed(segment: 1)))
        }
    }

    @Test func theWrongKeyIsRefusedAtOpen() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        #expect(try exactly(fixture.error(reading: fixture.bytes, key: try AttachmentFormat.newKey()), .segmentAuthenticationFailed(segment: 2)))
        #expect(try fixture.error(reading: fixture.bytes, key: SecretBytes([1, 2, 3])) == .keyUnavailable)
        #expect(try fixture.error(reading: fixture.bytes) == nil)
    }
}

/// Whether `error` is `expected`'s kind with its segment, position and version (`==` compares the
/// kind only).
private func exactly(_ error: AttachmentFileError?, _ expected: AttachmentFileError) -> Bool {
    guard let error else { return false }
    return error == expected && error.segment == expected.segment && error.belongsAt == expected.belongsAt && error.version == expected.version
}
