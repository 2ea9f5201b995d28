import Foundation
import SyncTestSupport
import Testing

@testable import SyncKeys

/// Passphrase normalisation (NFC on bytes, never through a `String`) against two references: the
/// NFC of Python's `unicodedata` (the same Unicode version as the tables) for every assigned
/// character alone, after a starter, decomposed and followed by a mark, and for random mixes of
/// composites, marks and jamo; and Foundation's `precomposedStringWithCanonicalMapping` (what
/// earlier releases used) for every character of the Basic Multilingual Plane.
@Suite struct NFCTests {
    /// The NFC bytes `Passphrase.normalized` gives for `text`.
    static func normalized(_ text: String) throws -> [UInt8] {
        try Passphrase.normalized(SecretBytes(Array(text.utf8))).withUnsafeBytes { Array($0) }
    }

    /// Every scalar assigned in the tables' Unicode version, but the large runs of ideographs and
    /// private use (no mappings, no combining classes: each is its own NFC).
    static let scalars: [Unicode.Scalar] = {
        let parts = NFC.unicodeVersion.split(separator: ".").compactMap { Int($0) }
        let version = (parts.first ?? 0, parts.dropFirst().first ?? 0)
        let skipped: [ClosedRange<UInt32>] = [0x3400...0x4DBF, 0x4E00...0x9FFF, 0xE000...0xF8FF, 0x2_0000...0x3_FFFF, 0xF_0000...0x10_FFFF]
        return (UInt32(0x80)...0x10_FFFF).compactMap { value in
            guard !skipped.contains(where: { $0.contains(value) }), let scalar = Unicode.Scalar(value),
                let age = scalar.properties.age, (age.major, age.minor) <= version
            else { return nil }
            return scalar
        }
    }()

    /// Each scalar alone, after a starter, decomposed, and between a starter and a mark.
    static let singleTexts: [String] = scalars.flatMap { scalar in
        let alone = String(Character(scalar))
        return [alone, "a" + alone, alone.decomposedStringWithCanonicalMapping, "x" + alone + "\u{0323}"]
    }

    /// Random mixes of one to ten scalars from pools of marks, composites, jamo and letters.
    static let mixedTexts: [String] = {
        let marks = scalars.filter { $0.properties.canonicalCombiningClass.rawValue != 0 }
        let composites = scalars.filter { String(Character($0)).decomposedStringWithCanonicalMapping.unicodeScalars.count > 1 }
        let jamo = (UInt32(0x1100)...0x11FF).compactMap(Unicode.Scalar.init)
        let pools = [marks, composites, jamo, Array("aeiouAEIOUnNsS ".unicodeScalars), ["\u{AC00}", "\u{D7A3}"] as [Unicode.Scalar]]
        var generator = SystemRandomNumberGenerator()
        return (0..<20_000).map { _ in
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...10, using: &generator) {
                if let scalar = pools.randomElement(using: &generator)?.randomElement(using: &generator) { text.append(scalar) }
            }
            return String(text)
        }
    }()

    @Test func everyTextMatchesPythonsUnicodedata() async throws {
        // Seconds of work: on a thread of its own, not on the cooperative pool.
        let (lines, mismatches) = try await onOwnThread { try Self.compareWithPython() }
        try #require(lines.first == NFC.unicodeVersion, "the reference has the tables' Unicode version")
        try #require(lines.count > Self.singleTexts.count + Self.mixedTexts.count)
        #expect(mismatches.isEmpty, "\(mismatches.count) differ from Python's NFC, e.g. \(mismatches.prefix(10))")
        #expect(Self.scalars.count > 30_000)
    }

    /// Python's NFC of every text (after its Unicode version) and the texts normalised otherwise.
    static func compareWithPython() throws -> (lines: [String], mismatches: [String]) {
        let texts = Self.singleTexts + Self.mixedTexts
        let script = """
            import sys, unicodedata
            sys.stdout.write(unicodedata.unidata_version + "\\n")
            for line in sys.stdin.read().split("\\n"):
                sys.stdout.write(unicodedata.normalize("NFC", line) + "\\n")
            """
        let result = try runProgram(
            "/usr/bin/python3", ["-c", script], input: texts.joined(separator: "\n"),
            environment: ["PYTHONIOENCODING": "utf-8", "LANG": "C.UTF-8"])
        guard result.status == 0 else { throw ReferenceFailure(message: "python3 failed: \(result.error)") }
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var mismatches: [String] = []
        for (text, expected) in zip(texts, lines.dropFirst()) where try Self.normalized(text) != Array(expected.utf8) {
            mismatches.append(text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " "))
        }
        return (lines, mismatches)
    }

    @Test func foundationAgreesOnEveryCharacterOfTheBasicMultilingualPlane() async throws {
        let (count, mismatches) = try await onOwnThread { try Self.compareWithFoundation() }
        #expect(mismatches.isEmpty, "\(mismatches.count) differ from Foundation's NFC, e.g. \(mismatches.prefix(10))")
        #expect(count > 80_000)
    }

    /// The BMP texts compared and those Foundation normalises otherwise.
    static func compareWithFoundation() throws -> (count: Int, mismatches: [String]) {
        // Earlier releases normalised through Foundation, so a passphrase must give the bytes it gave
        // then. They agree on every BMP character alone, after a starter, decomposed and before a
        // mark. Foundation's NFC (swift-foundation on Linux) deviates from UAX #15 elsewhere, where
        // Python and this implementation agree: a supplementary-plane starter composes as if it
        // were the BMP character with its low 16 bits (x U+10041 U+0323 becomes x U+1EA0), an LV
        // syllable and a trailing consonant stay apart (U+AC00 U+11A8 is not U+AC01), and marks
        // after a decomposed non-starter are not reordered (U+1DED U+0F73).
        let texts = Self.singleTexts.filter { $0.unicodeScalars.allSatisfy { $0.value <= 0xFFFF } }
        var mismatches: [String] = []
        for text in texts where try Self.normalized(text) != Array(text.precomposedStringWithCanonicalMapping.utf8) {
            mismatches.append(text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " "))
        }
        return (texts.count, mismatches)
    }

    @Test func noFullDecompositionIsLongerThanTheBufferAllows() {
        let longest = Self.scalars.map { String(Character($0)).decomposedStringWithCanonicalMapping.unicodeScalars.count }.max()
        #expect(longest == NFC.maximumDecompositionLength)
    }

    @Test func knownFormsCompose() throws {
        #expect(try Self.normalized("e\u{0301}") == Array("\u{00E9}".utf8))
        #expect(try Self.normalized("\u{212B}") == Array("\u{00C5}".utf8), "a singleton (Angstrom sign) becomes Å")
        #expect(try Self.normalized("\u{1100}\u{1161}\u{11A8}") == Array("\u{AC01}".utf8), "Hangul L V T compose by algorithm")
        #expect(try Self.normalized("\u{0958}") == Array("\u{0915}\u{093C}".utf8), "a composition exclusion stays decomposed")
        let ordered = try Self.normalized("a\u{0323}\u{0302}")
        #expect(try Self.normalized("a\u{0302}\u{0323}") == ordered, "marks are put in canonical order")
        #expect(ordered == Array("\u{1EAD}".utf8))
        #expect(try Self.normalized("\u{0301}e") == Array("\u{0301}e".utf8), "a leading mark has nothing to compose with")
        #expect(try Self.normalized("x\u{10041}\u{0323}") == Array("x\u{10041}\u{0323}".utf8), "no composite with a Linear B syllable")
    }

    @Test func bytesThatAreNotUTF8AreUsedAsGiven() throws {
        for bytes: [UInt8] in [[0x61, 0xC0, 0x80], [0xE9, 0x61], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3]] {
            #expect(try Passphrase.normalized(SecretBytes(bytes)).withUnsafeBytes { Array($0) } == bytes)
        }
    }

    @Test func aNormalFormLongerThanTheLimitIsRefused() {
        // U+0958 (3 bytes) is excluded from composition: its NFC form is two scalars, 6 bytes.
        let text = String(repeating: "\u{0958}", count: 341)
        #expect(text.utf8.count <= Passphrase.maximumLength)
        #expect(throws: KeyError.passphraseTooLong) { try Self.normalized(text) }
    }
}

/// The Python reference could not be run.
struct ReferenceFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
