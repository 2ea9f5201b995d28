import Foundation
import SyncWire
import Testing

/// The texts RFC 8259 allows, each with the value it must give (the `y_` cases of a JSON
/// conformance suite, written for this parser's choices: integers stay `.int`, everything with a
/// fraction or an exponent is `.double`).
@Suite struct JSONParserAcceptTests {
    struct Accepted: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        let expected: JSONValue
        var description: String { name }

        init(_ name: String, _ text: String, _ expected: JSONValue) {
            self.init(name, bytes: Array(text.utf8), expected)
        }

        init(_ name: String, bytes: [UInt8], _ expected: JSONValue) {
            self.name = name
            self.bytes = bytes
            self.expected = expected
        }
    }

    static let structures: [Accepted] = [
        Accepted("y_array_empty", "[]", []),
        Accepted("y_array_empty_string", #"[""]"#, [""]),
        Accepted("y_array_arrays_with_spaces", "[[]   ]", [[]]),
        Accepted("y_array_false", "[false]", [false]),
        Accepted("y_array_null", "[null]", [nil]),
        Accepted("y_array_heterogeneous", #"[null, 1, "1", {}]"#, [nil, 1, "1", .object([:])]),
        Accepted("y_array_with_several_null", "[1,null,null,null,2]", [1, nil, nil, nil, 2]),
        Accepted("y_array_with_leading_space", " [1]", [1]),
        Accepted("y_array_with_trailing_space", "[2] ", [2]),
        Accepted("y_array_with_1_and_newline", "[1\n]", [1]),
        Accepted("y_object_empty", "{}", .object([:])),
        Accepted("y_object_empty_key", #"{"":0}"#, ["": 0]),
        Accepted("y_object_basic", #"{"asd":"sdf"}"#, ["asd": "sdf"]),
        Accepted("y_object_two_members", #"{"asd":"sdf", "dfg":"fgh"}"#, ["asd": "sdf", "dfg": "fgh"]),
        Accepted("y_object_simple", #"{"a":[]}"#, ["a": []]),
        Accepted("y_object_escaped_null_in_key", #"{"foo\u0000bar": 42}"#, ["foo\u{0}bar": 42]),
        Accepted("y_object_extreme_numbers", #"{ "min": -1.0e+28, "max": 1.0e+28 }"#, ["min": .double(-1e28), "max": .double(1e28)]),
        Accepted("y_object_with_newlines", "{\n\"a\": \"b\"\n}", ["a": "b"]),
        Accepted("y_object_all_whitespace", " \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n1 \t\r\n} \t\r\n", ["a": 1]),
        Accepted("y_object_nested", #"{"a":{"b":[{"c":null}]}}"#, ["a": ["b": [["c": nil]]]]),
        Accepted("y_object_keys_differing_in_case", #"{"a":1,"A":2}"#, ["a": 1, "A": 2]),
        Accepted("y_structure_lonely_false", "false", false),
        Accepted("y_structure_lonely_true", "true", true),
        Accepted("y_structure_lonely_null", "null", nil),
        Accepted("y_structure_lonely_int", "42", 42),
        Accepted("y_structure_lonely_negative_real", "-0.1", .double(-0.1)),
        Accepted("y_structure_lonely_string", #""asd""#, "asd"),
        Accepted("y_structure_whitespace_array", " [] ", []),
        Accepted("y_structure_trailing_newline", "[\"a\"]\n", ["a"]),
        Accepted("y_structure_nesting_at_the_limit", nested(JSONParser.maximumDepth), nestedValue(JSONParser.maximumDepth)),
    ]

    static let numbers: [Accepted] = [
        Accepted("y_number_simple_int", "[123]", [123]),
        Accepted("y_number_negative_int", "[-123]", [-123]),
        Accepted("y_number_negative_one", "[-1]", [-1]),
        Accepted("y_number_minus_zero", "[-0]", [0]),
        Accepted("y_number_zero", "[0]", [0]),
        Accepted("y_number_int64_max", "[9223372036854775807]", [.int(.max)]),
        Accepted("y_number_int64_min", "[-9223372036854775808]", [.int(.min)]),
        Accepted("y_number_above_int64_is_a_double", "[9223372036854775808]", [.double(9.223372036854775808e18)]),
        Accepted("y_number_below_int64_is_a_double", "[-9223372036854775809]", [.double(-9.223372036854775809e18)]),
        Accepted("y_number_30_digits", "[123456789012345678901234567890]", [.double(1.2345678901234568e29)]),
        Accepted("y_number_integral_real_stays_real", "[2.0]", [.double(2)]),
        Accepted("y_number_negative_zero_real", "[-0.0]", [.double(-0.0)]),
        Accepted("y_number_0e+1", "[0e+1]", [.double(0)]),
        Accepted("y_number_0e1", "[0e1]", [.double(0)]),
        Accepted("y_number_after_space", "[ 4]", [4]),
        Accepted(
            "y_number_double_close_to_zero", "[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]", [.double(-1e-78)]),
        Accepted("y_number_int_with_exp", "[20e1]", [.double(200)]),
        Accepted("y_number_real_capital_e", "[1E22]", [.double(1e22)]),
        Accepted("y_number_real_capital_e_neg_exp", "[1E-2]", [.double(0.01)]),
        Accepted("y_number_real_capital_e_pos_exp", "[1E+2]", [.double(100)]),
        Accepted("y_number_real_exponent", "[123e45]", [.double(123e45)]),
        Accepted("y_number_real_fraction_exponent", "[123.456e78]", [.double(123.456e78)]),
        Accepted("y_number_real_neg_exp", "[1e-2]", [.double(0.01)]),
        Accepted("y_number_real_pos_exponent", "[1e+2]", [.double(100)]),
        Accepted("y_number_simple_real", "[123.456789]", [.double(123.456789)]),
        Accepted("y_number_one_tenth", "[0.1]", [.double(0.1)]),
        Accepted("y_number_largest_double", "[1.7976931348623157e308]", [.double(.greatestFiniteMagnitude)]),
        Accepted("y_number_smallest_subnormal", "[5e-324]", [.double(.leastNonzeroMagnitude)]),
        Accepted("y_number_long_fraction", "[3.14159265358979323846264338327950288]", [.double(3.141592653589793)]),
        Accepted("y_number_many_leading_fraction_zeros", "[0.00000000000000000000000000000000000000001]", [.double(1e-41)]),
        Accepted("y_number_underflow_is_zero", "[1e-400]", [.double(0)]),
        Accepted("y_number_huge_exponent_of_zero", "[0e999999999999]", [.double(0)]),
    ]

    static let strings: [Accepted] = [
        Accepted("y_string_1_2_3_bytes_UTF-8_sequences", #"["\u0060\u012a\u12AB"]"#, ["\u{60}\u{12A}\u{12AB}"]),
        Accepted("y_string_accepted_surrogate_pair", #"["\uD801\udc37"]"#, ["\u{10437}"]),
        Accepted("y_string_accepted_surrogate_pairs", #"["\ud83d\ude39\ud83d\udc8d"]"#, ["\u{1F639}\u{1F48D}"]),
        Accepted("y_string_allowed_escapes", #"["\"\\\/\b\f\n\r\t"]"#, ["\"\\/\u{8}\u{C}\n\r\t"]),
        Accepted("y_string_backslash_and_u_escaped_zero", #"["\\u0000"]"#, ["\\u0000"]),
        Accepted("y_string_comments_inside_are_text", #"["a/*b*/c/*d//e"]"#, ["a/*b*/c/*d//e"]),
        Accepted("y_string_escaped_control_character", #"["\u0012"]"#, ["\u{12}"]),
        Accepted("y_string_escaped_noncharacter", #"["\uFFFF"]"#, ["\u{FFFF}"]),
        Accepted("y_string_last_surrogates_1_and_2", #"["\uDBFF\uDFFF"]"#, ["\u{10FFFF}"]),
        Accepted("y_string_null_escape", #"["\u0000"]"#, ["\u{0}"]),
        Accepted("y_string_escape_then_text", #"["a\nb\u00e9c"]"#, ["a\nb\u{E9}c"]),
        Accepted("y_string_single_quote_inside", #"["it's"]"#, ["it's"]),
        Accepted("y_string_utf8", "[\"€𝄞\"]", ["€𝄞"]),
        Accepted("y_string_two_byte_utf8", "[\"ünï\"]", ["ünï"]),
        Accepted("y_string_nonCharacterInUTF-8_U+FFFF", bytes: [0x5B, 0x22, 0xEF, 0xBF, 0xBF, 0x22, 0x5D], ["\u{FFFF}"]),
        Accepted("y_string_last_scalar_in_UTF-8", bytes: [0x5B, 0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22, 0x5D], ["\u{10FFFF}"]),
        Accepted("y_string_u+2028_line_sep", "[\"\u{2028}\"]", ["\u{2028}"]),
        Accepted("y_string_with_del_character", "[\"a\u{7F}a\"]", ["a\u{7F}a"]),
        Accepted("y_string_space", #"" ""#, " "),
    ]

    @Test(arguments: structures + numbers + strings)
    func acceptedTextGivesItsValue(_ accepted: Accepted) throws {
        let value = try JSONParser.parse(accepted.bytes)
        #expect(value == accepted.expected)
        if case .double(let real) = value, case .double(let expected) = accepted.expected {
            #expect(real.bitPattern == expected.bitPattern, "the same double, sign of zero included")
        }
        if case .array(let elements) = value, case .array(let expected) = accepted.expected {
            for (real, wanted) in zip(elements, expected) {
                if case .double(let a) = real, case .double(let b) = wanted { #expect(a.bitPattern == b.bitPattern) }
            }
        }
        #expect(try JSONParser.parse(String(decoding: accepted.bytes, as: UTF8.self)) == accepted.expected, "the String entry point agrees")
    }

    @Test func objectsAndPagesHaveTheirOwnEntryPoints() throws {
        #expect(try JSONParser.parseObject(Data(#" {"id": "a", "n": 1} "#.utf8)) == ["id": "a", "n": 1])
        #expect(try JSONParser.parseObject(#"{"id": "a"}"#) == ["id": "a"])
        #expect(
            try JSONParser.parseObjects(Data(#"[{"id": "a"}, {"id": "b", "x": [1, {"y": null}]}]"#.utf8)) == [
                ["id": "a"], ["id": "b", "x": [1, ["y": nil]]],
            ])
        #expect(try JSONParser.parseObjects(Array("[]".utf8)).isEmpty)
    }

    /// `depth` arrays, one in the other, around `7`.
    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + "7" + String(repeating: "]", count: depth)
    }

    static func nestedValue(_ depth: Int) -> JSONValue {
        (0..<depth).reduce(JSONValue.int(7)) { inner, _ in [inner] }
    }
}
