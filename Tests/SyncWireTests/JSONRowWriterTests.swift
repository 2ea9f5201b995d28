import Foundation
import SyncWire
import Testing

/// The row writer: the same bytes as the writer gives for the objects the rows make.
@Suite struct JSONRowWriterTests {
    /// The objects `rows` make under `names`, as a dictionary keeps them (the last value of a name).
    private func objects(_ names: [String], _ rows: [[JSONValue]]) -> [JSONObject] {
        rows.map { row in
            var object = JSONObject()
            for (name, value) in zip(names, row) { object[name] = value }
            return object
        }
    }

    private func written(_ names: [String], _ rows: [[JSONValue]]) throws -> JSONRowWriter {
        var writer = JSONRowWriter(names: names)
        for row in rows { try writer.append { row[$0] } }
        return writer
    }

    @Test func rowsAreWrittenAsTheWriterWritesTheirObjects() throws {
        let names = ["updatedAt", "id", "text", "complete", "priority", "createdAt", "deleted", "version", "score", "tags", "B", "é"]
        let rows: [[JSONValue]] = [
            [
                "2024-01-02T03:04:05.678Z", "A-1", "a \"quoted\" \\ line\n\u{1}", true, 3, "2024-01-01T00:00:00.000Z", false, "v1",
                2.5, ["x", 1, nil, ["k": "v", "a": [1.0]]], nil, "é😀",
            ],
            ["2024-01-02T03:04:05.679Z", "b", "", false, -9_223_372_036_854_775_808, "x", true, "v2", 1e300, [], 0, "\u{2028}"],
        ]
        let writer = try written(names, rows)
        #expect(writer.count == 2)
        #expect(Data(writer.bytes) == (try JSONWriter.data(objects(names, rows))))
        #expect(try JSONParser.parseObjects(writer.bytes) == objects(names, rows))
    }

    /// `finish()` hands over the text `bytes` shows, and the writer starts a new array.
    @Test func finishingGivesTheTextAndStartsANewArray() throws {
        var writer = try written(["a", "b"], [[1, "x"], [2, "y"]])
        let shown = writer.bytes
        #expect(writer.finish() == shown)
        #expect(writer.count == 0)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[]")
        try writer.append { [JSONValue.int(3), .string("z")][$0] }
        #expect(String(decoding: writer.finish(), as: UTF8.self) == #"[{"a":3,"b":"z"}]"#)
    }

    @Test func noRowsIsAnEmptyArray() throws {
        let writer = JSONRowWriter(names: ["a", "b"])
        #expect(writer.count == 0)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[]")
        #expect(String(decoding: try written([], [[], []]).bytes, as: UTF8.self) == "[{},{}]")
    }

    /// Two names equal as Swift strings are one member, as in a dictionary: the first spelling,
    /// the last value; names are sorted by their bytes, whatever their order in the row.
    @Test func namesEqualAsStringsAreOneMemberAsInADictionary() throws {
        let names = ["e\u{301}", "z", "\u{E9}", "a", "z"]
        let rows: [[JSONValue]] = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
        let writer = try written(names, rows)
        #expect(Data(writer.bytes) == (try JSONWriter.data(objects(names, rows))))
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[{"a":4,"e\#u{301}":3,"z":5},{"a":9,"e\#u{301}":8,"z":10}]"#)
    }

    /// A value JSON cannot hold fails its row, which is left out; the rows before and after stay.
    @Test func aRowThatCannotBeWrittenIsLeftOut() throws {
        var writer = JSONRowWriter(names: ["a", "b"])
        try writer.append { [JSONValue.int(1), .string("x")][$0] }
        #expect(throws: JSONError.self) { try writer.append { [JSONValue.int(2), .double(.infinity)][$0] } }
        try writer.append { [JSONValue.int(3), .string("y")][$0] }
        #expect(writer.count == 2)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[{"a":1,"b":"x"},{"a":3,"b":"y"}]"#)
    }
}
