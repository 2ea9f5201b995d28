import Foundation
import SyncWire
import Testing

/// JSON text written piece by piece is the text ``JSONWriter`` writes for the same value.
@Suite struct JSONBuilderTests {
    static let item: JSONObject = [
        "id": "a\"b", "text": "line\nbreak é", "done": true, "count": 3, "ratio": 0.5, "tags": ["x", .null],
        "nested": ["deep": ["deeper": 1]], "updatedAt": "2001-01-01T00:00:00.000Z", "Version": "v1",
    ]

    @Test func piecesMakeTheTextTheWriterMakes() throws {
        var builder = JSONBuilder()
        builder.openObject()
        builder.member("operations")
        builder.openArray()
        for method in ["POST", "PATCH"] {
            builder.openObject()
            builder.member("method")
            builder.value(method)
            builder.member("item")
            builder.openObject()
            try builder.members(of: Self.item, omitting: { _ in false })
            builder.closeObject()
            builder.closeObject()
        }
        try builder.value(.int(7))
        builder.openArray()
        builder.closeArray()
        builder.closeArray()
        builder.member("empty")
        builder.openObject()
        builder.closeObject()
        builder.closeObject()
        let operations: [JSONValue] = ["POST", "PATCH"].map { .object(["method": .string($0), "item": .object(Self.item)]) }
        let expected: JSONValue = .object(["empty": .object([:]), "operations": .array(operations + [.int(7), .array([])])])
        // The members of the outer objects come in the order written; their values match.
        #expect(try JSONCoding.decode(JSONValue.self, from: builder.data) == expected)
        let itemText = String(decoding: try JSONWriter.data(Self.item), as: UTF8.self)
        let text = String(decoding: builder.data, as: UTF8.self)
        #expect(text.contains(#"{"method":"POST","item":"# + itemText + "}"), "an object's members are sorted as the writer sorts them")
    }

    @Test func omittedMembersAreLeftOut() throws {
        var builder = JSONBuilder()
        builder.openObject()
        builder.member("id")
        builder.value("new")
        try builder.members(of: Self.item, omitting: { $0 == "id" || $0.lowercased() == "version" || $0 == "updatedAt" })
        builder.closeObject()
        var expected = Self.item
        for name in ["Version", "updatedAt"] { expected[name] = nil }
        expected["id"] = "new"
        #expect(try JSONCoding.decode(JSONObject.self, from: builder.data) == expected)
    }

    @Test func valuesTheWriterRefusesAreRefused() {
        var builder = JSONBuilder()
        builder.openArray()
        #expect(throws: JSONError.self) { try builder.value(.double(.infinity)) }
        var deep: JSONValue = .int(1)
        for _ in 0..<JSONParser.maximumDepth { deep = .array([deep]) }
        #expect(throws: JSONError.self) { try builder.value(deep) }
    }
}
