import Foundation
import SyncWire
import Testing

@Suite struct JSONValueTests {
    @Test func roundTripKeepsIntegersAndReals() throws {
        let object: JSONObject = ["id": "a", "n": 3, "x": 2.5, "b": true, "z": nil, "arr": [1, "two"], "o": ["k": "v"]]
        let text = try JSONCoding.string(object)
        let back = try JSONCoding.object(from: text)
        #expect(back == object)
        #expect(back["n"] == .int(3))
        #expect(back["x"] == .double(2.5))
    }

    @Test func rejectsNonObjectText() {
        #expect(throws: (any Error).self) { try JSONCoding.object(from: "[1,2]") }
        #expect(throws: (any Error).self) { try JSONCoding.object(from: "{not json") }
    }

    @Test(arguments: ["a", "abc-123", String(repeating: "x", count: 255), "ünï"])
    func validIDs(_ id: String) { #expect(ItemID.isValid(id)) }

    @Test(arguments: ["", ".", "..", "a/b", "a\"b", "a+b", "a?b", "a\\b", "a`b", "a\u{07}b", String(repeating: "x", count: 256)])
    func invalidIDs(_ id: String) { #expect(!ItemID.isValid(id)) }

    @Test func wireDatesHaveMillisecondsAndRoundTrip() throws {
        let date = Date(timeIntervalSince1970: 944_235_869.123_9)
        let text = WireDate.string(from: date)
        #expect(text == "1999-12-03T15:44:29.123Z")
        let back = try #require(WireDate.date(from: text))
        #expect(WireDate.string(from: back) == text)
        #expect(WireDate.string(from: WireDate.epoch) == "1970-01-01T00:00:00.000Z")
        #expect(WireDate.date(from: "not a date") == nil)
    }
}
