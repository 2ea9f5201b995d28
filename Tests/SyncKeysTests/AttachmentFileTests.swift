import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// Writes `content` as an encrypted attachment file at `url` under `key`.
func sealAttachment(_ content: [UInt8], to url: URL, key: SecretBytes, noncePrefix: [UInt8]? = nil, chunk: Int = 10_000) throws {
    let writer = try AttachmentFileWriter(temporaryURL: url.appendingPathExtension("tmp"), key: key, noncePrefix: noncePrefix)
    var offset = 0
    while offset < content.count {
        let end = min(offset + chunk, content.count)
        try writer.write(Array(content[offset..<end]))
        offset = end
    }
    try writer.commit(to: url)
}

/// The content of the known-answer vector: 70,000 bytes, byte `i` = `(31·i + 7) mod 256`.
let vectorContent = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
/// The vector's key: the bytes 0x00…0x1f.
let vectorKey = SecretBytes((0..<32).map { UInt8($0) })

/// The encrypted attachment file round-trips any content, streams in segments, and its size
/// depends only on the padded length.
@Suite struct AttachmentFileRoundTripTests {
    @Test(arguments: [0, 1, 4088, 4089, 65_535, 65_536, 65_536 + 4088, 65_536 + 4089, 200_001])
    func contentRoundTrips(_ length: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let content = randomBytes(length)
        let key = try AttachmentFormat.newKey()
        let url = directory.file("a.csat")
        try sealAttachment(content, to: url, key: key)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        #expect(Int64(size) == AttachmentFormat.fileSize(forContentLength: Int64(length)))
        #expect(!FileManager.default.fileExists(atPath: url.appendingPathExtension("tmp").path))
        let reader = try AttachmentFileReader(url: url, key: key)
        #expect(reader.contentLength == Int64(length))
        #expect(try reader.read(at: 0, count: length + 10) == content)
        try reader.verify()
        if length > 70_000 {
            // Reads across a segment boundary, and past the end.
            #expect(try reader.read(at: 65_530, count: 20) == Array(content[65_530..<65_550]))
            #expect(try reader.read(at: Int64(length - 3), count: 100) == Array(content.suffix(3)))
        }
        #expect(try reader.read(at: Int64(length), count: 5) == [])
    }

    @Test func sizesArePaddedToTheGranularity() {
        // 1 byte and 4,088 bytes (4 KiB with the 8-byte length) make files of the same size.
        #expect(AttachmentFormat.fileSize(forContentLength: 1) == AttachmentFormat.fileSize(forContentLength: 4088))
        #expect(AttachmentFormat.fileSize(forContentLength: 4089) == AttachmentFormat.fileSize(forContentLength: 8184))
        #expect(AttachmentFormat.fileSize(forContentLength: 1) == 16 + 4096 + 16)
        #expect(AttachmentFormat.fileSize(forContentLength: 65_536) == 16 + 65_536 + 4096 + 32)
    }

    @Test func theFileIsNeverInClearAndTheTemporaryFileGoesWhenDiscarded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = Array("PLAINTEXT-MARKER-\(UUID().uuidString)".utf8)
        let url = directory.file("a.csat")
        try sealAttachment(Array((0..<200).map { _ in marker }.joined()), to: url, key: try AttachmentFormat.newKey())
        let stored = try Data(contentsOf: url)
        #expect(stored.range(of: Data(marker)) == nil)

        let temporary = directory.file("b.tmp")
        let writer = try AttachmentFileWriter(temporaryURL: temporary, key: try AttachmentFormat.newKey())
        try writer.write(marker)
        writer.discard()
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
        // An existing file is never overwritten by a new writer.
        #expect(throws: AttachmentFileError.self) { _ = try AttachmentFileWriter(temporaryURL: url, key: vectorKey) }
        #expect(try Data(contentsOf: url) == stored)
    }
}

/// Keys/example/attachment.csat (written from FORMAT.md §11 by an independent Python encoder)
/// is what the SDK writes for the same key, nonce prefix and content, the SDK reads it back,
/// and the independent decoder (Tests/Tools/envelope_decoder.py) decrypts it.
@Suite struct AttachmentVectorTests {
    static let vector = repositoryRoot.appendingPathComponent("Keys/example/attachment.csat")

    @Test func theSDKWritesTheVectorByteForByte() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("vector.csat")
        try sealAttachment(vectorContent, to: url, key: vectorKey, noncePrefix: Array(0xa0...0xa6), chunk: 777)
        #expect(try Data(contentsOf: url) == Data(contentsOf: Self.vector))
        let reader = try AttachmentFileReader(url: Self.vector, key: vectorKey)
        #expect(try reader.read(at: 0, count: 80_000) == vectorContent)
    }

    @Test func theIndependentDecoderDecryptsTheVector() throws {
        try #require(FileManager.default.isExecutableFile(atPath: FormatTests.python), "run scripts/setup")
        let result = try runProgram(
            FormatTests.python, [FormatTests.decoder, "attachment", Self.vector.path], input: Array((hex(vectorKey) + "\n").utf8))
        #expect(result.status == 0)
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "70000 \(hex(try KeyDerivation.sha256(vectorContent)))")

        // The decoder checks the tags too: another key fails.
        let wrong = try runProgram(
            FormatTests.python, [FormatTests.decoder, "attachment", Self.vector.path], input: Array((String(repeating: "11", count: 32) + "\n").utf8))
        #expect(wrong.status != 0)
    }
}
