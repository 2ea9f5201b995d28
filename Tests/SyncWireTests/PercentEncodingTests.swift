import Foundation
import SyncWire
import Testing

/// A path segment (a table name, an item id) and a query item of a request URL are percent-encoded
/// byte by byte, every character but the unreserved ones of RFC 3986 (and `$` in a query), as
/// Foundation's percent-encoding with that set of characters does.
@Suite struct PercentEncodingTests {
    static let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    static let texts = [
        "todo", "6F9619FF-8B86-D011-B42D-00CF4FC964FF", "a b", "a/b", "50%", "ä", "日本", "🙂x", "?#[]@!$&'()*+,;=",
        "", "~._-", "\u{7F}\u{0}", "$filter", "text eq 'x'' or 1=1 --'",
    ]

    @Test(arguments: texts)
    func aSegmentIsEncodedAsFoundationEncodesItWithTheUnreservedCharacters(_ text: String) {
        let allowed = CharacterSet(charactersIn: Self.unreserved)
        #expect(PercentEncoding.encode(text) == text.addingPercentEncoding(withAllowedCharacters: allowed))
    }

    @Test(arguments: texts)
    func aQueryItemKeepsItsDollarSignsAsWell(_ text: String) {
        let allowed = CharacterSet(charactersIn: Self.unreserved + "$")
        #expect(ODataQuery.encode(text) == text.addingPercentEncoding(withAllowedCharacters: allowed))
    }

    @Test func unreservedTextComesBackAsItIsAndOtherTextIsEncodedInUpperCaseHex() {
        #expect(PercentEncoding.encode("Todo_Item-1.2~") == "Todo_Item-1.2~")
        #expect(PercentEncoding.encode("a b/ä") == "a%20b%2F%C3%A4")
        #expect(PercentEncoding.encode("$top") == "%24top")
        #expect(ODataQuery.encode("$top=5") == "$top%3D5")
    }
}
