import Foundation
import Testing

@testable import SyncKeys

/// The incremental SHA-256: the FIPS 180-2 known answers, fed whole and in pieces, and a failing
/// OpenSSL call that throws.
@Suite struct SHA256HasherTests {
    struct Vector: Sendable, CustomStringConvertible {
        var message: [UInt8]
        var expected: String
        var description: String { "\(message.count) bytes" }
    }

    /// FIPS 180-2, appendix B (and the empty message).
    static let vectors = [
        Vector(message: [], expected: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        Vector(message: Array("abc".utf8), expected: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        Vector(
            message: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
            expected: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        Vector(
            message: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000),
            expected: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ]

    @Test(arguments: vectors)
    func knownAnswersWholeAndInPieces(_ vector: Vector) throws {
        var whole = try SHA256Hasher()
        try whole.update(vector.message)
        #expect(hex(try whole.finalize()) == vector.expected)
        #expect(hex(try KeyDerivation.sha256(vector.message)) == vector.expected)

        for pieceLength in [1, 7, 64, 1000] where pieceLength < max(vector.message.count, 2) {
            var pieces = try SHA256Hasher()
            var offset = 0
            while offset < vector.message.count {
                let end = min(offset + pieceLength, vector.message.count)
                try vector.message[offset..<end].withUnsafeBytes { try pieces.update($0) }
                offset = end
            }
            #expect(hex(try pieces.finalize()) == vector.expected, "pieces of \(pieceLength)")
        }
    }

    @Test func emptyUpdatesChangeNothing() throws {
        var hasher = try SHA256Hasher()
        try hasher.update([])
        try hasher.update(UnsafeRawBufferPointer(start: nil, count: 0))
        try hasher.update(Array("abc".utf8))
        try hasher.update([])
        #expect(hex(try hasher.finalize()) == Self.vectors[1].expected)
    }

    @Test func aFailingOpenSSLCallThrowsInsteadOfHashingNothing() throws {
        // No provider answers this property query, so fetching SHA-256 fails inside OpenSSL.
        expectKeyError(.cryptoFailure("SHA-256 fetch")) {
            _ = try SHA256Hasher(properties: "provider=ciphersync-no-such-provider")
        }
        // The failure leaves nothing behind for the next hasher.
        var hasher = try SHA256Hasher(properties: "provider=default")
        try hasher.update(Array("abc".utf8))
        #expect(hex(try hasher.finalize()) == Self.vectors[1].expected)
    }
}
