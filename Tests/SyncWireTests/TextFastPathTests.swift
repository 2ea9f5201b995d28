import Foundation
import SyncWire
import Testing

/// The byte-level paths of ASCII folding, delimiting and entity tags give exactly what the
/// scalar-by-scalar rules give, on ASCII text and on text with other scalars.
@Suite struct TextFastPathTests {
    static let texts = [
        "", "id", "updatedAt", "UPDATEDAT", "Äpfel", "ÄPFEL und Birnen", "ZÉro", "日本Go", "e\u{301}A", "A\u{1F600}Z", "[@`{",
        "it's", "say \"hi\"", "'\u{301}x", "\"", "back\\slash",
    ]

    /// The fold as its rule states it: each scalar A–Z lowered, every other scalar kept.
    static func scalarFold(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append((0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(UInt8(scalar.value + 0x20)) : scalar)
        }
        return String(scalars)
    }

    @Test(arguments: texts)
    func foldingLowersOnlyASCIICapitals(text: String) {
        let folded = ASCIICase.fold(text)
        #expect(Array(folded.unicodeScalars) == Array(Self.scalarFold(text).unicodeScalars))
        #expect(folded.unicodeScalars.count == text.unicodeScalars.count)
    }

    @Test(arguments: texts)
    func equalityWithoutASCIICaseIsEqualityOfTheFolds(text: String) {
        for other in Self.texts + [text.uppercased(), text.lowercased(), ASCIICase.fold(text)] {
            #expect(ASCIICase.equal(text, other) == (ASCIICase.fold(text) == ASCIICase.fold(other)), "\(text) / \(other)")
        }
    }

    @Test func foldingExamples() {
        #expect(ASCIICase.fold("ÄPFEL") == "Äpfel")
        #expect(ASCIICase.fold("CreatedAt") == "createdat")
        #expect(ASCIICase.fold("A\u{1F600}Z") == "a\u{1F600}z")
    }

    @Test(arguments: texts)
    func delimitingDoublesEachDelimiterScalar(text: String) {
        for delimiter: Unicode.Scalar in ["'", "\""] {
            var expected = String.UnicodeScalarView([delimiter])
            for scalar in text.unicodeScalars {
                if scalar == delimiter { expected.append(delimiter) }
                expected.append(scalar)
            }
            expected.append(delimiter)
            #expect(Array(DelimitedText.quote(text, with: delimiter).unicodeScalars) == Array(expected))
        }
    }

    @Test(arguments: texts)
    func entityTagsReadBackAsTheirVersion(text: String) {
        let tag = ETag.quote(text)
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))
        #expect(ETag.version(from: tag) == text)
    }

    @Test func backslashesInEntityTags() {
        #expect(ETag.quote("a\\b") == #""a\b""#)
        #expect(ETag.version(from: #""a\b""#) == #"a\b"#, "a backslash before anything but a quote stays")
        #expect(ETag.version(from: #""a\"b""#) == #"a"b"#)
    }
}

/// Case-insensitive name equality: ASCII names folded byte by byte, others as Foundation decides.
@Suite struct CaseInsensitiveTests {
    @Test func asciiNamesDifferingOnlyByCaseAreEqual() {
        #expect(CaseInsensitive.equal("ETag", "etag"))
        #expect(CaseInsensitive.equal("createdAt", "CREATEDAT"))
        #expect(!CaseInsensitive.equal("createdAt", "createdAt "))
        #expect(!CaseInsensitive.equal("[", "{"), "only letters fold")
        #expect(!CaseInsensitive.equal("etag", "etags"))
    }

    @Test func otherNamesCompareAsFoundationDoes() {
        for (a, b) in [("Äpfel", "äpfel"), ("straße", "STRASSE"), ("Äpfel", "apfel"), ("é", "E")] {
            #expect(CaseInsensitive.equal(a, b) == (a.caseInsensitiveCompare(b) == .orderedSame), "\(a) \(b)")
        }
    }
}
