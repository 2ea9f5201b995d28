import Foundation
import SyncSQL
import SyncWire
import Testing

/// The one value type: how JSON is stored and read back, identifiers quoted, fragments built.
@Suite struct SQLValueTests {
    @Test(arguments: [
        JSONValue.bool(true), .bool(false), .int(-7), .int(Int64.max), .double(2.5), .string("héllo"), .string(""),
        .array([1, "two", nil]), .object(["k": "v", "n": 1]),
    ])
    func aValueReadsBackThroughTheTypeItCreates(value: JSONValue) throws {
        let stored = try SQLValue(json: value)
        #expect(JSONValue(sql: stored, type: ColumnType(inferringFrom: value)) == value)
    }

    @Test func storageClasses() throws {
        #expect(try SQLValue(json: .bool(true)) == .integer(1))
        #expect(try SQLValue(json: .null) == .null)
        #expect(try SQLValue(json: ["b": 1, "a": [true]]) == .text(#"{"a":[true],"b":1}"#))
        #expect(JSONValue(sql: .integer(3), type: .real) == .double(3))
        #expect(JSONValue(sql: .integer(3), type: nil) == .int(3))
        #expect(JSONValue(sql: .text("not json"), type: .json) == .string("not json"))
        #expect(JSONValue(sql: .null, type: .boolean) == .null)
    }

    @Test func aBlobReadsBackAsBase64Text() {
        #expect(JSONValue(sql: .blob([0, 1, 255]), type: .text) == .string("AAH/"))
        // These bytes are "1234" in base64, which is also JSON text: still a string.
        #expect(JSONValue(sql: .blob([0xD7, 0x6D, 0xF8]), type: .json) == .string("1234"))
    }

    @Test func identifiersAreQuotedOneWay() {
        #expect(SQLIdentifier.quote("todo") == #""todo""#)
        #expect(SQLIdentifier.quote(#"say "hi""#) == #""say ""hi""""#)
        let name = #"a"b"#
        let fragment: SQLFragment = "SELECT * FROM \(identifier: name)"
        #expect(fragment.statement(in: .sqlite).sql == "SELECT * FROM \(SQLIdentifier.quote(name))")
    }

    @Test func fragmentsKeepTheirValuesInTextOrder() {
        let a: SQLFragment = .bind(.text("a"))
        let b: SQLFragment = "\(a) || \(bind: .integer(2))"
        let joined = SQLFragment.joined([b, "NULL", a], separator: ", ")
        #expect(joined.arguments == [.text("a"), .integer(2), .text("a")])
        #expect(joined.statement(in: .sqlite) == SQLStatement("(?) || ?, NULL, ?", [.text("a"), .integer(2), .text("a")]))
        #expect(joined.statement(in: NumberedDialect()).sql == "($1) || $2, NULL, $3")
        #expect(SQLFragment(raw: "").statement(in: .sqlite) == SQLStatement(""))
    }
}
