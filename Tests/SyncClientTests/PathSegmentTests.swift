import Foundation
import Testing

@testable import SyncClient

/// A path segment of a request URL (a table name, an item id) is percent-encoded byte by byte,
/// every character but the unreserved ones of RFC 3986, as Foundation's percent-encoding with
/// that set of characters does.
@Suite struct PathSegmentTests {
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    @Test(arguments: [
        "todo", "6F9619FF-8B86-D011-B42D-00CF4FC964FF", "a b", "a/b", "50%", "ä", "日本", "🙂x", "?#[]@!$&'()*+,;=",
        "", "~._-", "\u{7F}\u{0}",
    ])
    func aSegmentIsEncodedAsFoundationEncodesItWithTheUnreservedCharacters(_ segment: String) {
        #expect(ServiceConnection.encodePathSegment(segment) == segment.addingPercentEncoding(withAllowedCharacters: Self.unreserved))
    }

    @Test func anUnreservedSegmentComesBackAsItIsAndOthersAreEncodedInUpperCaseHex() {
        #expect(ServiceConnection.encodePathSegment("Todo_Item-1.2~") == "Todo_Item-1.2~")
        #expect(ServiceConnection.encodePathSegment("a b/ä") == "a%20b%2F%C3%A4")
    }
}
