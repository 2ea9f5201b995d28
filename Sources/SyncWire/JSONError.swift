/// Why a text is not the JSON that was expected (``JSONParser``), or why a value cannot be written
/// as JSON (``JSONWriter``).
///
/// The error names a byte offset and a short reason, never the text itself, so it is safe to log
/// and to send back to whoever sent the text.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong: a set of static values that may grow, compared with `==`
    /// (`error.reason == .duplicateKey`).
    public struct Reason: Sendable, Hashable {
        enum Code: String, Sendable, Hashable, CaseIterable {
            case unexpectedEnd, expectedValue, expectedName, expectedColon, expectedCommaOrObjectEnd
            case expectedCommaOrArrayEnd, trailingComma, comment, singleQuote, nonFiniteNumber, invalidNumber
            case leadingZero, numberOutOfRange, invalidLiteral, controlCharacter, invalidEscape, loneSurrogate
            case invalidUTF8, byteOrderMark, duplicateKey, tooDeep, trailingData, notAnObject, notAnArray
        }

        let code: Code

        /// The text ends before the value is complete (or is empty).
        public static let unexpectedEnd = Reason(code: .unexpectedEnd)
        /// Something other than a value where a value must be.
        public static let expectedValue = Reason(code: .expectedValue)
        /// Something other than a member name in double quotes where one must be.
        public static let expectedName = Reason(code: .expectedName)
        /// No `:` after a member name.
        public static let expectedColon = Reason(code: .expectedColon)
        /// Neither `,` nor `}` after a member.
        public static let expectedCommaOrObjectEnd = Reason(code: .expectedCommaOrObjectEnd)
        /// Neither `,` nor `]` after an element.
        public static let expectedCommaOrArrayEnd = Reason(code: .expectedCommaOrArrayEnd)
        /// A `,` directly before `}` or `]`.
        public static let trailingComma = Reason(code: .trailingComma)
        /// A `/* … */` or `// …` comment.
        public static let comment = Reason(code: .comment)
        /// A string or name in single quotes.
        public static let singleQuote = Reason(code: .singleQuote)
        /// `NaN`, `Infinity` or `-Infinity` (or, when writing, a `Double` that is not finite).
        public static let nonFiniteNumber = Reason(code: .nonFiniteNumber)
        /// A number that does not follow the grammar (`1.`, `.5`, `-`, `1e`, `+1`).
        public static let invalidNumber = Reason(code: .invalidNumber)
        /// A number with a superfluous leading zero (`01`, `-00`).
        public static let leadingZero = Reason(code: .leadingZero)
        /// A number whose magnitude is too large for a `Double`.
        public static let numberOutOfRange = Reason(code: .numberOutOfRange)
        /// A word that is not `true`, `false` or `null`.
        public static let invalidLiteral = Reason(code: .invalidLiteral)
        /// An unescaped control character (U+0000–U+001F) inside a string.
        public static let controlCharacter = Reason(code: .controlCharacter)
        /// A backslash followed by something other than `" \ / b f n r t` or `u` and four hex digits.
        public static let invalidEscape = Reason(code: .invalidEscape)
        /// A `\u` escape of a UTF-16 surrogate that is not half of a pair.
        public static let loneSurrogate = Reason(code: .loneSurrogate)
        /// Bytes that are not well-formed UTF-8.
        public static let invalidUTF8 = Reason(code: .invalidUTF8)
        /// A UTF-8 byte order mark before the value.
        public static let byteOrderMark = Reason(code: .byteOrderMark)
        /// An object naming the same member twice.
        public static let duplicateKey = Reason(code: .duplicateKey)
        /// Arrays and objects nested deeper than ``JSONParser/maximumDepth``.
        public static let tooDeep = Reason(code: .tooDeep)
        /// More than whitespace after the value.
        public static let trailingData = Reason(code: .trailingData)
        /// A value other than an object where an object was expected.
        public static let notAnObject = Reason(code: .notAnObject)
        /// A value other than an array where an array was expected.
        public static let notAnArray = Reason(code: .notAnArray)

        /// Every reason, one of each kind.
        package static var allCases: [Reason] { Code.allCases.map { Reason(code: $0) } }

        /// A short phrase for messages (it never contains any of the input).
        public var phrase: String {
            switch code {
            case .unexpectedEnd: return "the text ends before the JSON value does"
            case .expectedValue: return "expected a JSON value"
            case .expectedName: return "expected a member name in double quotes"
            case .expectedColon: return "expected ':' after a member name"
            case .expectedCommaOrObjectEnd: return "expected ',' or '}' after a member"
            case .expectedCommaOrArrayEnd: return "expected ',' or ']' after an element"
            case .trailingComma: return "a trailing comma is not allowed"
            case .comment: return "a comment is not allowed (JSON has no comments)"
            case .singleQuote: return "single quotes are not allowed (strings and names take double quotes)"
            case .nonFiniteNumber: return "NaN and Infinity are not JSON numbers"
            case .invalidNumber: return "an invalid number"
            case .leadingZero: return "a number with a leading zero"
            case .numberOutOfRange: return "a number too large for a double"
            case .invalidLiteral: return "an invalid literal (expected true, false or null)"
            case .controlCharacter: return "an unescaped control character in a string"
            case .invalidEscape: return "an invalid escape sequence"
            case .loneSurrogate: return "a \\u escape of a lone UTF-16 surrogate"
            case .invalidUTF8: return "invalid UTF-8"
            case .byteOrderMark: return "a byte order mark is not allowed"
            case .duplicateKey: return "a duplicate member name"
            case .tooDeep: return "arrays and objects nested deeper than \(JSONParser.maximumDepth) levels"
            case .trailingData: return "text after the JSON value"
            case .notAnObject: return "expected a JSON object"
            case .notAnArray: return "expected a JSON array"
            }
        }
    }

    /// What is wrong.
    public let reason: Reason
    /// The offset, in bytes from the start of the text, where the problem starts (the start of
    /// the offending token, escape sequence, UTF-8 sequence or member name); `nil` for an error
    /// while writing.
    public let offset: Int?

    /// An error at `offset` (or, for writing, at none).
    /// - Parameters:
    ///   - reason: what is wrong.
    ///   - offset: the byte offset where the problem starts, or `nil` when writing.
    public init(_ reason: Reason, at offset: Int?) {
        self.reason = reason
        self.offset = offset
    }

    /// The reason and, when parsing, the offset: `a duplicate member name at byte 32`.
    public var description: String {
        guard let offset else { return reason.phrase }
        return "\(reason.phrase) at byte \(offset)"
    }
}
