import Foundation
import SyncWire
import Testing

/// `JSONCoding` reads and writes JSON values, objects and pages with the strict parser and the
/// writer; other `Codable` types, with `JSONValue`s inside, still work through Foundation.
@Suite struct JSONCodingTests {
    @Test func jsonTypesGoThroughTheStrictParser() throws {
        let text = Data(#"{"id": "a", "n": 1,}"#.utf8)
        #expect(throws: JSONError(.trailingComma, at: 18)) { try JSONCoding.decode(JSONObject.self, from: text) }
        #expect(throws: JSONError(.trailingComma, at: 18)) { try JSONCoding.decode(JSONValue.self, from: text) }
        #expect(throws: JSONError(.duplicateKey, at: 9)) { try JSONCoding.decode([JSONObject].self, from: Data(#"[{"a":1, "a":2}]"#.utf8)) }
        #expect(throws: JSONError(.notAnArray, at: 0)) { try JSONCoding.decode([JSONValue].self, from: Data("{}".utf8)) }
        #expect(throws: JSONError(.comment, at: 0)) { try JSONCoding.object(from: "// c\n{}") }

        #expect(try JSONCoding.decode(JSONObject.self, from: Data(#"{"n": 2.0}"#.utf8)) == ["n": .double(2)])
        #expect(try JSONCoding.decode([JSONObject].self, from: Data(#"[{"a": 1}, {}]"#.utf8)) == [["a": 1], [:]])
        #expect(try JSONCoding.decode([JSONValue].self, from: Data(#"[1, "x", null]"#.utf8)) == [1, "x", nil])
        #expect(try JSONCoding.decode(JSONValue.self, from: Data("7".utf8)) == 7)
    }

    @Test func jsonTypesAreWrittenByTheWriter() throws {
        let object: JSONObject = ["b": 2.0, "a": [1, "x"]]
        #expect(try JSONCoding.encode(object) == JSONWriter.data(object))
        #expect(try JSONCoding.encode([object, [:]]) == JSONWriter.data([object, [:]]))
        #expect(try JSONCoding.encode(JSONValue.object(object)) == JSONWriter.data(.object(object)))
        #expect(try JSONCoding.encode([JSONValue.int(1), 2.5]) == Data("[1,2.5]".utf8))
        #expect(try JSONCoding.string(object) == #"{"a":[1,"x"],"b":2.0}"#)
        #expect(throws: JSONError(.nonFiniteNumber, at: nil)) { try JSONCoding.encode(["x": JSONValue.double(.nan)] as JSONObject) }
    }

    struct Envelope: Codable, Equatable {
        var results: [JSONObject]
        var count: Int?
        var extra: JSONValue
    }

    /// Inside another `Codable` type a `JSONValue` decodes each kind, without trying them all.
    @Test func valuesInsideOtherCodableTypesDecodeEveryKind() throws {
        let text =
            #"{"results": [{"s": "x", "b": true, "i": 9007199254740993, "d": 2.5, "z": null, "o": {"k": [1, "v"]}, "a": [[]]}], "count": 1, "extra": false}"#
        let envelope = try JSONCoding.decode(Envelope.self, from: Data(text.utf8))
        #expect(envelope.results == [["s": "x", "b": true, "i": .int(9_007_199_254_740_993), "d": 2.5, "z": nil, "o": ["k": [1, "v"]], "a": [[]]]])
        #expect(envelope.count == 1 && envelope.extra == false)
        #expect(try JSONCoding.decode(Envelope.self, from: JSONCoding.encode(envelope)) == envelope)
    }
}
