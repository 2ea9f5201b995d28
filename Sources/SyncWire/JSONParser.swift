public import Foundation

/// A strict RFC 8259 JSON parser over UTF-8 bytes, producing ``JSONValue``s.
///
/// It accepts exactly the JSON texts of RFC 8259 and refuses everything else with a
/// ``JSONError`` naming the byte offset and the reason:
///
/// - trailing commas, comments, single quotes, `NaN` / `Infinity`, numbers with leading zeros,
///   a leading `+` or a bare `.`; a byte order mark; anything but whitespace after the value;
/// - strings with unescaped control characters, invalid escapes, `\u` escapes of lone surrogates,
///   or bytes that are not well-formed UTF-8 (overlong forms and encoded surrogates included);
/// - **duplicate member names**: an object that names a member twice is refused, never resolved
///   to the first or the last value (names are compared as Swift strings, so two spellings that
///   are canonically equivalent Unicode count as one name);
/// - arrays and objects nested more than ``maximumDepth`` levels deep (the parser recurses once
///   per level, so the limit also bounds its stack);
/// - numbers too large for a `Double` (never turned into infinity).
///
/// A number written as an integer (no fraction, no exponent) that fits `Int64` becomes
/// ``JSONValue/int(_:)``; every other number becomes ``JSONValue/double(_:)``, so `2.0` stays a
/// real and `2` an integer. Errors never contain the input text.
public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted: 64 levels (`{"a": [1]}` is 2 levels).
    public static let maximumDepth = 64

    /// Parses a JSON text of any value.
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the value.
    /// - Throws: ``JSONError`` when the text is not RFC 8259 JSON.
    public static func parse(_ bytes: some ContiguousBytes) throws -> JSONValue {
        try bytes.withUnsafeBytes { raw in try read(raw) { reader throws(JSONError) in try reader.value(depth: 0) } }
    }

    /// Parses a JSON text of any value.
    /// - Parameter text: the text.
    /// - Returns: the value.
    /// - Throws: ``JSONError`` when the text is not RFC 8259 JSON.
    public static func parse(_ text: String) throws -> JSONValue {
        try withUTF8(of: text) { raw in try read(raw) { reader throws(JSONError) in try reader.value(depth: 0) } }
    }

    /// Parses a JSON text that must be an object.
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the object.
    /// - Throws: ``JSONError`` when the text is not RFC 8259 JSON, or
    ///   ``JSONError/Reason/notAnObject`` when it is another kind of value.
    public static func parseObject(_ bytes: some ContiguousBytes) throws -> JSONObject {
        try bytes.withUnsafeBytes { raw in try read(raw) { reader throws(JSONError) in try reader.object(depth: 0) } }
    }

    /// Parses a JSON text that must be an object.
    /// - Parameter text: the text.
    /// - Returns: the object.
    /// - Throws: ``JSONError`` when the text is not RFC 8259 JSON, or
    ///   ``JSONError/Reason/notAnObject`` when it is another kind of value.
    public static func parseObject(_ text: String) throws -> JSONObject {
        try withUTF8(of: text) { raw in try read(raw) { reader throws(JSONError) in try reader.object(depth: 0) } }
    }

    /// Parses a JSON text that must be an array of objects (a page of items).
    /// - Parameter bytes: the UTF-8 text.
    /// - Returns: the objects, in order.
    /// - Throws: ``JSONError`` when the text is not RFC 8259 JSON, ``JSONError/Reason/notAnArray``
    ///   when it is not an array, or ``JSONError/Reason/notAnObject`` (at the element) when an
    ///   element is not an object.
    public static func parseObjects(_ bytes: some ContiguousBytes) throws -> [JSONObject] {
        try bytes.withUnsafeBytes { raw in try read(raw) { reader throws(JSONError) in try reader.objects() } }
    }

    /// Parses a JSON text that must be an array (for ``JSONCoding``).
    static func parseArray(_ bytes: some ContiguousBytes) throws -> [JSONValue] {
        try bytes.withUnsafeBytes { raw in try read(raw) { reader throws(JSONError) in try reader.array(depth: 0) } }
    }

    private static func withUTF8<T>(of text: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        var text = text
        return try text.withUTF8 { buffer in try body(UnsafeRawBufferPointer(buffer)) }
    }

    /// Reads a whole text with `body`.
    private static func read<T>(_ raw: UnsafeRawBufferPointer, _ body: (inout JSONReader) throws(JSONError) -> T) throws(JSONError) -> T {
        var reader = JSONReader(raw)
        return try reader.document(body)
    }
}

/// The parser's state: the text and a position in it. Containers recurse, one level per
/// nesting level, bounded by ``JSONParser/maximumDepth``.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// The bytes of the string being unescaped, reused from string to string.
    var scratch: [UInt8] = []
    /// The members of the objects being read, innermost last, with the offsets of their names:
    /// an object's dictionary is made once its size is known.
    private var members: [(name: String, value: JSONValue, offset: Int)] = []

    init(_ raw: UnsafeRawBufferPointer) {
        // UTF-8 text is bytes: viewing raw bytes as UInt8 is always valid.
        bytes = raw.bindMemory(to: UInt8.self)
    }

    /// The whole text: no byte order mark, optional whitespace, the value, optional whitespace.
    mutating func document<T>(_ body: (inout JSONReader) throws(JSONError) -> T) throws(JSONError) -> T {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { throw JSONError(.byteOrderMark, at: 0) }
        skipWhitespace()
        let result = try body(&self)
        skipWhitespace()
        if index < bytes.count { throw unexpected(.trailingData) }
        return result
    }

    // MARK: values

    /// A value whose container is `depth` levels deep (0 for the top level).
    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case ASCII.quote: return .string(try string())
        case ASCII.openBrace: return .object(try object(depth: depth))
        case ASCII.openBracket: return .array(try array(depth: depth))
        case ASCII.minus, ASCII.zero...ASCII.nine: return try number()
        case ASCII.t:
            try literal("true")
            return .bool(true)
        case ASCII.f:
            try literal("false")
            return .bool(false)
        case ASCII.n:
            try literal("null")
            return .null
        case ASCII.N, ASCII.I: throw matches("NaN") || matches("Infinity") ? JSONError(.nonFiniteNumber, at: index) : unexpected(.expectedValue)
        default: throw unexpected(.expectedValue)
        }
    }

    /// An object (at the current `{`) whose container is `depth` levels deep.
    mutating func object(depth: Int) throws(JSONError) -> JSONObject {
        guard index < bytes.count, bytes[index] == ASCII.openBrace else { throw mismatch(.notAnObject) }
        if try open(depth: depth, closing: ASCII.closeBrace) { return [:] }
        let first = members.count
        while true {
            let nameStart = index
            guard index < bytes.count, bytes[index] == ASCII.quote else { throw unexpected(.expectedName) }
            let name = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == ASCII.colon else { throw unexpected(.expectedColon) }
            index += 1
            skipWhitespace()
            members.append((name, try value(depth: depth + 1), nameStart))
            if try close(ASCII.closeBrace, else: .expectedCommaOrObjectEnd) { return try collectMembers(from: first) }
        }
    }

    /// The members read since `first` as one object (taken off the stack); a name given twice
    /// is an error at its second occurrence.
    private mutating func collectMembers(from first: Int) throws(JSONError) -> JSONObject {
        var object = JSONObject(minimumCapacity: members.count - first)
        for member in members[first...] where object.updateValue(member.value, forKey: member.name) != nil {
            throw JSONError(.duplicateKey, at: member.offset)
        }
        members.removeSubrange(first...)
        return object
    }

    /// An array (at the current `[`) whose container is `depth` levels deep.
    mutating func array(depth: Int) throws(JSONError) -> [JSONValue] {
        try elements(depth: depth) { reader, depth throws(JSONError) in try reader.value(depth: depth) }
    }

    /// The top-level array of objects of a page.
    mutating func objects() throws(JSONError) -> [JSONObject] {
        try elements(depth: 0) { reader, depth throws(JSONError) in try reader.object(depth: depth) }
    }

    /// The elements of an array (at the current `[`) whose container is `depth` levels deep.
    private mutating func elements<Element>(
        depth: Int, _ element: (inout JSONReader, Int) throws(JSONError) -> Element
    ) throws(JSONError) -> [Element] {
        guard index < bytes.count, bytes[index] == ASCII.openBracket else { throw mismatch(.notAnArray) }
        if try open(depth: depth, closing: ASCII.closeBracket) { return [] }
        var elements: [Element] = []
        while true {
            elements.append(try element(&self, depth + 1))
            if try close(ASCII.closeBracket, else: .expectedCommaOrArrayEnd) { return elements }
        }
    }

    /// Steps into a container (at its opening bracket) opened inside one `depth` levels deep,
    /// within the nesting limit.
    /// - Returns: whether the container is empty (its `closing` bracket, too, is then read).
    private mutating func open(depth: Int, closing: UInt8) throws(JSONError) -> Bool {
        guard depth < JSONParser.maximumDepth else { throw JSONError(.tooDeep, at: index) }
        index += 1
        skipWhitespace()
        guard index < bytes.count, bytes[index] == closing else { return false }
        index += 1
        return true
    }

    /// Reads what follows a member or an element: a comma before the next one, or `closing`.
    /// - Returns: whether the container ended.
    private mutating func close(_ closing: UInt8, else expected: JSONError.Reason) throws(JSONError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case ASCII.comma:
            let comma = index
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == closing { throw JSONError(.trailingComma, at: comma) }
            return false
        case closing:
            index += 1
            return true
        default:
            throw unexpected(expected)
        }
    }

    /// One of `true`, `false`, `null` at the current position.
    private mutating func literal(_ word: StaticString) throws(JSONError) {
        guard matches(word) else {
            throw bytes.count - index < word.utf8CodeUnitCount && matchesPrefix(word)
                ? JSONError(.unexpectedEnd, at: bytes.count) : JSONError(.invalidLiteral, at: index)
        }
        index += word.utf8CodeUnitCount
    }

    /// Whether the text at the current position starts with `word`.
    func matches(_ word: StaticString) -> Bool {
        bytes.count - index >= word.utf8CodeUnitCount && matchesPrefix(word)
    }

    /// Whether the rest of the text (or `word`, whichever is shorter) agrees with `word`.
    private func matchesPrefix(_ word: StaticString) -> Bool {
        let length = min(word.utf8CodeUnitCount, bytes.count - index)
        return word.withUTF8Buffer { expected in (0..<length).allSatisfy { bytes[index + $0] == expected[$0] } }
    }

    // MARK: errors

    /// Skips spaces, tabs, line feeds and carriage returns (the only whitespace of JSON).
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case ASCII.space, ASCII.lineFeed, ASCII.carriageReturn, ASCII.tab: index += 1
            default: return
            }
        }
    }

    /// The error for an unexpected byte at the current position: the specific mistake when the
    /// byte shows one (a comment, a single quote, invalid UTF-8), else `expected`.
    func unexpected(_ expected: JSONError.Reason) -> JSONError {
        guard index < bytes.count else { return JSONError(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case ASCII.slash where index + 1 < bytes.count && (bytes[index + 1] == ASCII.slash || bytes[index + 1] == ASCII.star):
            return JSONError(.comment, at: index)
        case ASCII.apostrophe:
            return JSONError(.singleQuote, at: index)
        case 0x80...0xFF where utf8SequenceLength(at: index) == nil:
            return JSONError(.invalidUTF8, at: index)
        default:
            return JSONError(expected, at: index)
        }
    }

    /// The error for a value of the wrong kind at the current position: `reason` when a value
    /// starts here, else what is wrong with the text.
    private func mismatch(_ reason: JSONError.Reason) -> JSONError {
        guard index < bytes.count else { return JSONError(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case ASCII.quote, ASCII.openBrace, ASCII.openBracket, ASCII.minus, ASCII.zero...ASCII.nine:
            return JSONError(reason, at: index)
        case _ where matches("true") || matches("false") || matches("null"):
            return JSONError(reason, at: index)
        case _ where matches("NaN") || matches("Infinity"):
            return JSONError(.nonFiniteNumber, at: index)
        default:
            return unexpected(.expectedValue)
        }
    }
}

/// The ASCII bytes the grammar names.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let apostrophe: UInt8 = 0x27
    static let plus: UInt8 = 0x2B
    static let star: UInt8 = 0x2A
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let upperA: UInt8 = 0x41
    static let upperE: UInt8 = 0x45
    static let upperF: UInt8 = 0x46
    static let I: UInt8 = 0x49
    static let N: UInt8 = 0x4E
    static let openBracket: UInt8 = 0x5B
    static let backslash: UInt8 = 0x5C
    static let closeBracket: UInt8 = 0x5D
    static let lowerA: UInt8 = 0x61
    static let b: UInt8 = 0x62
    static let e: UInt8 = 0x65
    static let f: UInt8 = 0x66
    static let n: UInt8 = 0x6E
    static let r: UInt8 = 0x72
    static let t: UInt8 = 0x74
    static let u: UInt8 = 0x75
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
    static let percent: UInt8 = 0x25

    /// The value of a hexadecimal digit (`0`–`9`, `a`–`f`, `A`–`F`), or `nil` for another byte.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case zero...nine: return byte - zero
        case lowerA...f: return byte - lowerA + 10
        case upperA...upperF: return byte - upperA + 10
        default: return nil
        }
    }
}
