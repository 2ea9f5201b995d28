import Foundation
import SyncWire
import Testing

/// The texts RFC 8259 does not allow, each with the reason and byte offset the parser must give
/// (the `n_` cases of a JSON conformance suite, and this parser's own choices: duplicate names,
/// the nesting limit, a byte order mark and numbers beyond a `Double` are refused).
@Suite struct JSONParserRejectTests {
    struct Rejected: Sendable, CustomStringConvertible {
        let name: String
        let bytes: [UInt8]
        let reason: JSONError.Reason
        let offset: Int
        var description: String { name }

        init(_ name: String, _ text: String, _ reason: JSONError.Reason, at offset: Int) {
            self.init(name, bytes: Array(text.utf8), reason, at: offset)
        }

        init(_ name: String, bytes: [UInt8], _ reason: JSONError.Reason, at offset: Int) {
            self.name = name
            self.bytes = bytes
            self.reason = reason
            self.offset = offset
        }
    }

    static let structures: [Rejected] = [
        Rejected("n_structure_no_data", "", .unexpectedEnd, at: 0),
        Rejected("n_structure_whitespace_only", " \n", .unexpectedEnd, at: 2),
        Rejected("n_array_1_true_without_comma", "[1 true]", .expectedCommaOrArrayEnd, at: 3),
        Rejected("n_array_colon_instead_of_comma", #"["": 1]"#, .expectedCommaOrArrayEnd, at: 3),
        Rejected("n_array_comma_after_close", #"[""],"#, .trailingData, at: 4),
        Rejected("n_array_comma_and_number", "[,1]", .expectedValue, at: 1),
        Rejected("n_array_double_comma", "[1,,2]", .expectedValue, at: 3),
        Rejected("n_array_extra_close", #"["x"]]"#, .trailingData, at: 5),
        Rejected("n_array_extra_comma", #"["",]"#, .trailingComma, at: 3),
        Rejected("n_array_extra_comma_before_whitespace", "[1 , \n]", .trailingComma, at: 3),
        Rejected("n_array_incomplete", #"["x""#, .unexpectedEnd, at: 4),
        Rejected("n_array_inner_array_no_comma", "[3[4]]", .expectedCommaOrArrayEnd, at: 2),
        Rejected("n_array_just_comma", "[,]", .expectedValue, at: 1),
        Rejected("n_array_unclosed", "[", .unexpectedEnd, at: 1),
        Rejected("n_array_unclosed_trailing_comma", "[1,", .unexpectedEnd, at: 3),
        Rejected("n_incomplete_false", "[fals]", .invalidLiteral, at: 1),
        Rejected("n_incomplete_null", "[nul", .unexpectedEnd, at: 4),
        Rejected("n_incomplete_true", "[tru]", .invalidLiteral, at: 1),
        Rejected("n_structure_capitalized_True", "[True]", .expectedValue, at: 1),
        Rejected("n_object_bad_value", #"["x", truth]"#, .invalidLiteral, at: 6),
        Rejected("n_object_comma_instead_of_colon", #"{"x", null}"#, .expectedColon, at: 4),
        Rejected("n_object_double_colon", #"{"x"::"b"}"#, .expectedValue, at: 5),
        Rejected("n_object_missing_colon", #"{"a" b}"#, .expectedColon, at: 5),
        Rejected("n_object_missing_key", #"{:"b"}"#, .expectedName, at: 1),
        Rejected("n_object_missing_value", #"{"a":"#, .unexpectedEnd, at: 5),
        Rejected("n_object_no_colon", #"{"a""#, .unexpectedEnd, at: 4),
        Rejected("n_object_non_string_key", "{1:1}", .expectedName, at: 1),
        Rejected("n_object_unquoted_key", #"{a: "b"}"#, .expectedName, at: 1),
        Rejected("n_object_two_commas_in_a_row", #"{"a":"b",,"c":"d"}"#, .expectedName, at: 9),
        Rejected("n_object_missing_comma", #"{"a":1 "b":2}"#, .expectedCommaOrObjectEnd, at: 7),
        Rejected("n_object_trailing_comma", #"{"id":0,}"#, .trailingComma, at: 7),
        Rejected("n_object_with_trailing_garbage", #"{"a":"b"}#"#, .trailingData, at: 9),
        Rejected("n_structure_unclosed_object", #"{"asd":"asd""#, .unexpectedEnd, at: 12),
        Rejected("n_structure_double_array", "[][]", .trailingData, at: 2),
        Rejected("n_structure_angle_bracket", "<.>", .expectedValue, at: 0),
        Rejected("n_structure_null_byte_outside_string", bytes: [0x5B, 0x00, 0x5D], .expectedValue, at: 1),
        Rejected("n_structure_whitespace_formfeed", "[\u{0C}]", .expectedValue, at: 1),
        Rejected("n_structure_U+2060_word_joiner", "[\u{2060}]", .expectedValue, at: 1),
        Rejected("n_structure_non_breaking_space", "[\u{A0}1]", .expectedValue, at: 1),
    ]

    static let lenientExtensions: [Rejected] = [
        Rejected("n_object_single_quote", "{'a':0}", .singleQuote, at: 1),
        Rejected("n_string_single_quote", "['single quote']", .singleQuote, at: 1),
        Rejected("n_structure_open_array_apostrophe", "['", .singleQuote, at: 1),
        Rejected("n_object_trailing_comment", #"{"a":"b"}/**/"#, .comment, at: 9),
        Rejected("n_object_trailing_comment_slash_open", #"{"a":"b"}//"#, .comment, at: 9),
        Rejected("n_object_comment_inside", #"{"a":/*comment*/"b"}"#, .comment, at: 5),
        Rejected("n_structure_object_with_line_comment", "{\"a\":1 // c\n}", .comment, at: 7),
        Rejected("n_structure_leading_comment", "/**/[]", .comment, at: 0),
        Rejected("n_array_comment_after_element", "[1/**/]", .comment, at: 2),
        Rejected("n_array_lone_slash", "[1/]", .expectedCommaOrArrayEnd, at: 2),
        Rejected("n_number_NaN", "[NaN]", .nonFiniteNumber, at: 1),
        Rejected("n_number_infinity", "[Infinity]", .nonFiniteNumber, at: 1),
        Rejected("n_number_minus_infinity", "[-Infinity]", .nonFiniteNumber, at: 1),
        Rejected("n_number_top_level_NaN", "NaN", .nonFiniteNumber, at: 0),
        Rejected("n_number_Inf", "[Inf]", .expectedValue, at: 1),
        Rejected("n_structure_UTF8_BOM_no_data", bytes: [0xEF, 0xBB, 0xBF], .byteOrderMark, at: 0),
        Rejected("n_structure_UTF8_BOM_empty_object", bytes: [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], .byteOrderMark, at: 0),
        Rejected("n_object_duplicate_key", #"{"a":1,"a":2}"#, .duplicateKey, at: 7),
        Rejected("n_object_duplicate_key_same_value", #"{"a":"b","a":"b"}"#, .duplicateKey, at: 9),
        Rejected("n_object_duplicate_key_nested", #"{"a":1,"b":{"c":1,"c":2}}"#, .duplicateKey, at: 18),
        Rejected("n_object_duplicate_key_by_escape", #"{"a":1,"\u0061":2}"#, .duplicateKey, at: 7),
        Rejected("n_object_duplicate_key_canonically_equivalent", "{\"\u{E9}\":1,\"e\u{301}\":2}", .duplicateKey, at: 8),
        Rejected(
            "n_structure_nesting_beyond_the_limit", JSONParserAcceptTests.nested(JSONParser.maximumDepth + 1), .tooDeep, at: JSONParser.maximumDepth),
        Rejected("n_structure_100000_opening_arrays", String(repeating: "[", count: 100_000), .tooDeep, at: JSONParser.maximumDepth),
        Rejected(
            "n_structure_objects_beyond_the_limit",
            String(repeating: #"{"a":"#, count: JSONParser.maximumDepth + 1) + "1" + String(repeating: "}", count: JSONParser.maximumDepth + 1),
            .tooDeep, at: 5 * JSONParser.maximumDepth),
    ]

    static let numbers: [Rejected] = [
        Rejected("n_number_++", "[++1234]", .expectedValue, at: 1),
        Rejected("n_number_+1", "[+1]", .expectedValue, at: 1),
        Rejected("n_number_-01", "[-01]", .leadingZero, at: 1),
        Rejected("n_number_-1.0.", "[-1.0.]", .expectedCommaOrArrayEnd, at: 5),
        Rejected("n_number_.-1", "[.-1]", .expectedValue, at: 1),
        Rejected("n_number_0.e1", "[0.e1]", .invalidNumber, at: 1),
        Rejected("n_number_1.0e", "[1.0e]", .invalidNumber, at: 1),
        Rejected("n_number_1.0e+", "[1.0e+]", .invalidNumber, at: 1),
        Rejected("n_number_2.e3", "[2.e3]", .invalidNumber, at: 1),
        Rejected("n_number_leading_zero", "[012]", .leadingZero, at: 1),
        Rejected("n_number_neg_int_starting_with_zero", "[-012]", .leadingZero, at: 1),
        Rejected("n_number_double_zero", "[00]", .leadingZero, at: 1),
        Rejected("n_number_real_without_fractional_part", "[1.]", .invalidNumber, at: 1),
        Rejected("n_number_starting_with_dot", "[.123]", .expectedValue, at: 1),
        Rejected("n_number_hex", "[0x1]", .expectedCommaOrArrayEnd, at: 2),
        Rejected("n_number_minus_sign_with_trailing_garbage", "[-foo]", .invalidNumber, at: 1),
        Rejected("n_number_lone_minus", "-", .invalidNumber, at: 0),
        Rejected("n_number_huge_exp", "[1e400]", .numberOutOfRange, at: 1),
        Rejected("n_number_huge_negative", "[-1e400]", .numberOutOfRange, at: 1),
        Rejected("n_number_huge_exponent_digits", "[1e99999999999999999999]", .numberOutOfRange, at: 1),
        Rejected("n_number_400_digits", "[1" + String(repeating: "0", count: 400) + "]", .numberOutOfRange, at: 1),
    ]

    static let strings: [Rejected] = [
        Rejected("n_string_1_surrogate_then_escape", #"["\uD800\"]"#, .loneSurrogate, at: 2),
        Rejected("n_string_lone_high_surrogate", #"["\uD800"]"#, .loneSurrogate, at: 2),
        Rejected("n_string_lone_low_surrogate", #"["\uDC00"]"#, .loneSurrogate, at: 2),
        Rejected("n_string_two_high_surrogates", #"["\uD800\uD800"]"#, .loneSurrogate, at: 2),
        Rejected("n_string_high_surrogate_then_letter", #"["\uD800x"]"#, .loneSurrogate, at: 2),
        Rejected("n_string_reversed_pair", #"["\uDC00\uD800"]"#, .loneSurrogate, at: 2),
        Rejected("n_string_incomplete_escape", #"["\"]"#, .unexpectedEnd, at: 5),
        Rejected("n_string_incomplete_escaped_character", #"["\u00A"]"#, .invalidEscape, at: 2),
        Rejected("n_string_invalid_backslash_esc", #"["\a"]"#, .invalidEscape, at: 2),
        Rejected("n_string_escape_x", #"["\x00"]"#, .invalidEscape, at: 2),
        Rejected("n_string_escaped_apostrophe", #"["\'"]"#, .invalidEscape, at: 2),
        Rejected("n_string_unescaped_newline", "[\"new\nline\"]", .controlCharacter, at: 5),
        Rejected("n_string_unescaped_tab", "[\"\t\"]", .controlCharacter, at: 2),
        Rejected("n_string_unescaped_nul", bytes: [0x5B, 0x22, 0x61, 0x00, 0x61, 0x22, 0x5D], .controlCharacter, at: 3),
        Rejected("n_string_control_after_escape", "[\"\\n\u{1F}\"]", .controlCharacter, at: 4),
        Rejected("n_string_unterminated", #"["abc"#, .unexpectedEnd, at: 5),
        Rejected("n_string_invalid_utf8", bytes: [0x5B, 0x22, 0xFF, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_lone_continuation_byte", bytes: [0x5B, 0x22, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_overlong_2_bytes", bytes: [0x5B, 0x22, 0xC0, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_overlong_3_bytes", bytes: [0x5B, 0x22, 0xE0, 0x80, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_overlong_4_bytes", bytes: [0x5B, 0x22, 0xF0, 0x80, 0x80, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_utf8_surrogate", bytes: [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_above_U+10FFFF", bytes: [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_truncated_utf8", bytes: [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D], .invalidUTF8, at: 2),
        Rejected("n_string_truncated_utf8_at_end", bytes: [0x5B, 0x22, 0xE2, 0x82], .invalidUTF8, at: 2),
        Rejected("n_string_invalid_utf8_after_escape", bytes: [0x5B, 0x22, 0x5C, 0x6E, 0xFE, 0x22, 0x5D], .invalidUTF8, at: 4),
        Rejected("n_string_invalid_utf8_in_key", bytes: [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D], .invalidUTF8, at: 2),
        Rejected("n_structure_lone_invalid_utf8", bytes: [0xE5], .invalidUTF8, at: 0),
        Rejected("n_structure_invalid_utf8_between_values", bytes: [0x5B, 0x31, 0xFF, 0x5D], .invalidUTF8, at: 2),
    ]

    @Test(arguments: structures + lenientExtensions + numbers + strings)
    func rejectedTextGivesItsReasonAndOffset(_ rejected: Rejected) {
        #expect(throws: JSONError(rejected.reason, at: rejected.offset)) { try JSONParser.parse(rejected.bytes) }
        #expect(throws: JSONError.self) { try JSONParser.parseObject(rejected.bytes) }
    }

    @Test func objectAndPageEntryPointsCheckTheShape() {
        #expect(throws: JSONError(.notAnObject, at: 0)) { try JSONParser.parseObject("[1,2]") }
        #expect(throws: JSONError(.notAnObject, at: 1)) { try JSONParser.parseObject(" 5") }
        #expect(throws: JSONError(.notAnObject, at: 0)) { try JSONParser.parseObject("null") }
        #expect(throws: JSONError(.nonFiniteNumber, at: 0)) { try JSONParser.parseObject("NaN") }
        #expect(throws: JSONError(.unexpectedEnd, at: 0)) { try JSONParser.parseObject("") }
        #expect(throws: JSONError(.trailingData, at: 3)) { try JSONParser.parseObject("{} x") }
        #expect(throws: JSONError(.notAnArray, at: 0)) { try JSONParser.parseObjects(Data("{}".utf8)) }
        #expect(throws: JSONError(.notAnObject, at: 5)) { try JSONParser.parseObjects(Data("[{}, 3]".utf8)) }
        #expect(throws: JSONError(.trailingComma, at: 3)) { try JSONParser.parseObjects(Data("[{},]".utf8)) }
        #expect(throws: JSONError(.expectedValue, at: 1)) { try JSONParser.parseObjects(Data("[x]".utf8)) }
    }

    /// The message names the reason and the offset, and nothing of the text.
    @Test func errorsDescribeReasonAndOffsetOnly() throws {
        let secret = "s3cr3t-value"
        let error = try #require(throws: JSONError.self) { try JSONParser.parse(#"{"token": "\#(secret)", "token": 1}"#) }
        #expect(error.description == "a duplicate member name at byte 26")
        #expect(!"\(error)".contains(secret))
        #expect(JSONError(.nonFiniteNumber, at: nil).description == "NaN and Infinity are not JSON numbers")
        #expect(JSONError(.tooDeep, at: 3).description == "arrays and objects nested deeper than 64 levels at byte 3")
        let reasons = JSONError.Reason.allCases
        #expect(reasons.count == 24)
        #expect(Set(reasons).count == reasons.count)
        #expect(Set(reasons.map(\.phrase)).count == reasons.count)
        for reason in reasons { #expect(!reason.phrase.isEmpty) }
    }
}
