import Foundation
import SyncWire
import Testing

/// Percent-decoding answers what Foundation's `removingPercentEncoding` answers, for well-formed
/// and malformed text alike, except that escapes of bytes that are not UTF-8 are refused where
/// Foundation puts U+FFFD in the place of some of them (`%A9` and `%AA` would name one item).
@Suite struct PercentDecodingTests {
    /// What the decoding must answer for `text`: Foundation's answer, or `nil` where Foundation
    /// replaced bytes that are not UTF-8 by U+FFFD.
    static func expected(_ text: String, foundation: String?) -> String? {
        guard let foundation, foundation.contains("\u{FFFD}"), !text.contains("\u{FFFD}"), !text.uppercased().contains("%EF%BF%BD")
        else { return foundation }
        return nil
    }

    static let samples = [
        "", "plain", "a%20b", "%41%42c", "%c3%a9t%C3%A9", "100%", "%", "%4", "%4g", "%%41", "%zz", "a%2", "%FF", "%C3",
        "%C3%28", "%E2%82%AC", "%F0%9F%98%80", "%00", "a+b", "a%2Bb", "é%20ü", "%2f%2F", "id%3Fq%3D1", "%e2%82", "%A9", "x%80y",
        "%EF%BF%BD", "\u{FFFD}%20",
    ]

    @Test(arguments: samples) func agreesWithFoundation(_ text: String) {
        #expect(PercentDecoding.decode(text) == Self.expected(text, foundation: text.removingPercentEncoding))
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        for text in ["%A9", "x%80y", "%FF", "%C3", "%C3%28", "%ED%A0%80", "%C0%AF"] { #expect(PercentDecoding.decode(text) == nil, "\(text)") }
    }

    @Test func agreesWithFoundationOnGeneratedText() {
        // Text built from the pieces malformed escapes are made of, a few thousand times.
        let pieces = ["%", "2", "0", "A", "f", "g", "C3", "A9", "+", "é", "x", "%E2", "%82", "%AC", "%FF"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(PercentDecoding.decode(text) == Self.expected(text, foundation: text.removingPercentEncoding), "\(text)")
            let query = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            #expect(PercentDecoding.decode(text, plusAsSpace: true) == Self.expected(text, foundation: query), "\(text)")
        }
    }

    @Test func aPlusIsASpaceOnlyInAQueryItem() {
        #expect(PercentDecoding.decode("a+b%2B") == "a+b+")
        #expect(PercentDecoding.decode("a+b%2B", plusAsSpace: true) == "a b+")
    }

    @Test func decodesASubstringOfALargerText() {
        let path = "/tables/todo%20items/x"
        let segment = path.split(separator: "/")[1]
        #expect(PercentDecoding.decode(segment) == "todo items")
    }
}
