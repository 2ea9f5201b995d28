import Foundation
import SyncWire
import Testing

/// Which ids are valid: ASCII ids are checked byte by byte, others character by character; both
/// give the same answers.
@Suite struct ItemIDValidityTests {
    @Test func everyASCIICharacterAloneAndInsideAnId() {
        for byte in UInt8(0)...UInt8(0x7F) {
            let character = String(UnicodeScalar(byte))
            let refused = byte < 0x20 || byte == 0x7F || "\"+?\\/`".utf8.contains(byte)
            #expect(ItemID.isValid(character) == (!refused && character != "."), "\(byte)")
            #expect(ItemID.isValid("a\(character)b") == !refused, "\(byte)")
            // The same character in an id that is not all ASCII gets the same answer.
            #expect(ItemID.isValid("é\(character)b") == !refused, "\(byte)")
        }
    }

    @Test func lengthsAndDots() {
        #expect(!ItemID.isValid(""))
        #expect(ItemID.isValid(String(repeating: "a", count: 255)))
        #expect(!ItemID.isValid(String(repeating: "a", count: 256)))
        #expect(ItemID.isValid(String(repeating: "é", count: 255)))
        #expect(!ItemID.isValid(String(repeating: "é", count: 256)))
        #expect(!ItemID.isValid("."))
        #expect(!ItemID.isValid(".."))
        #expect(ItemID.isValid("..."))
        #expect(ItemID.isValid("a.b"))
        #expect(!ItemID.isValid("a\r\nb"))
        #expect(!ItemID.isValid("a\u{85}b"), "a control character beyond ASCII")
        #expect(ItemID.isValid("4f1c2a3e-0b6d-4c58-9a51-6f0e3f1b2c7d"))
    }

    /// A generated id is a lowercase version-4 UUID with the RFC 4122 variant, valid, and new
    /// every time.
    @Test func generatedIdsAreRandomVersionFourUUIDs() {
        let ids = (0..<1_000).map { _ in ItemID.generate() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let parsed = UUID(uuidString: id)
            #expect(parsed != nil && id == id.lowercased() && ItemID.isValid(id), "\(id)")
            guard let bytes = parsed?.uuid else { continue }
            #expect(bytes.6 >> 4 == 4 && bytes.8 >> 6 == 0b10, "\(id)")
        }
        // Every one of the 122 random bits varies: no bit is stuck across a thousand ids.
        var ones = [Int](repeating: 0, count: 128)
        for id in ids {
            guard let bytes = UUID(uuidString: id)?.uuid else { continue }
            withUnsafeBytes(of: bytes) { raw in
                for bit in 0..<128 where raw[bit / 8] >> (7 - bit % 8) & 1 == 1 { ones[bit] += 1 }
            }
        }
        let fixed: Set<Int> = [48, 49, 50, 51, 64, 65]
        #expect((0..<128).filter { !fixed.contains($0) }.allSatisfy { ones[$0] > 0 && ones[$0] < ids.count })
    }
}
