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
}
