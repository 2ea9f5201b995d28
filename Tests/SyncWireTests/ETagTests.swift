import SyncWire
import Testing

/// Entity tags: one quoting for client and server, strong comparison only (RFC 9110).
@Suite struct ETagTests {
    @Test(arguments: ["AAAAAAAAB9E=", "with \"quotes\" inside", "", "ü 1"])
    func aQuotedVersionReadsBackAsItself(version: String) {
        let tag = ETag.quote(version)
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))
        #expect(ETag.version(from: tag) == version)
        #expect(ETag.version(from: "  \(tag) ") == version, "surrounding spaces are not part of the tag")
    }

    @Test func quotingEscapesInnerQuotes() {
        #expect(ETag.quote("a\"b") == #""a\"b""#)
    }

    @Test func aWeakTagIsNoVersion() {
        #expect(ETag.version(from: #"W/"1""#) == nil)
        #expect(ETag.version(from: #" W/"1""#) == nil)
        #expect(ETag.version(from: "") == nil)
        #expect(ETag.version(from: "   ") == nil)
        #expect(ETag.version(from: "unquoted") == "unquoted", "an unquoted value is taken as it is")
    }

    @Test(arguments: ["\t", "\u{00A0}", "\u{3000}", " \t "])
    func whiteSpaceOfEveryKindAroundATagIsNotPartOfIt(space: String) {
        #expect(ETag.version(from: space + #""v1""# + space) == "v1")
        #expect(ETag.version(from: space + "v1") == "v1")
        #expect(ETag.isWildcard(space + "*" + space))
        #expect(ETag.ifMatch(space + #""v1""#, matches: "v1"))
    }

    @Test func aTagEndingBeyondASCIIIsKeptWhole() {
        #expect(ETag.version(from: "ü") == "ü")
        #expect(ETag.version(from: "\"ü\"") == "ü")
        #expect(ETag.version(from: "\"") == "\"", "one quote alone is no quoted tag")
        #expect(ETag.version(from: "\"\u{301}x\"") == "\u{301}x", "a quote is a byte, whatever follows it")
        #expect(ETag.version(from: "\"x\"\u{301}") == "\"x\"\u{301}", "a tag ending after its quote is unquoted")
        #expect(!ETag.isWildcard("**"))
        #expect(!ETag.isWildcard(""))
    }

    @Test func ifMatchComparesStrongly() {
        #expect(ETag.ifMatch(#""v1""#, matches: "v1"))
        #expect(ETag.ifMatch(#""a\"b""#, matches: "a\"b"))
        #expect(!ETag.ifMatch(#""v1""#, matches: "v2"))
        #expect(!ETag.ifMatch(#"W/"v1""#, matches: "v1"), "a weak tag never matches, even with the current version")
        #expect(!ETag.ifMatch(#""v1""#, matches: nil))
        #expect(ETag.ifMatch("*", matches: "v1"))
        #expect(ETag.ifMatch(" * ", matches: nil))
        #expect(!ETag.ifMatch("", matches: "v1"))
    }
}
