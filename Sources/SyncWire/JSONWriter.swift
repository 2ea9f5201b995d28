public import Foundation

/// Writes ``JSONValue``s as compact RFC 8259 JSON text that ``JSONParser`` reads back equal.
///
/// - Object members are sorted by the UTF-8 bytes of their names (the order Foundation's
///   `JSONEncoder` sorts keys in), a total order, so one value always gives the same bytes.
///   (Swift's `<` on strings is not one: neither `"é-" < "é"` nor the reverse holds when the
///   second `é` is written `e` + U+0301, and members would follow the dictionary's order.)
/// - Strings escape `"` and `\`, write U+0008, U+0009, U+000A, U+000C and U+000D as `\b \t \n
///   \f \r`, the other control characters as `\u00xx` (lowercase hex), and everything else as
///   UTF-8 (`/` is not escaped).
/// - Integers are written as integers; a `Double` as its shortest round-tripping decimal form,
///   always with a fraction or an exponent (`2.0`, `1e+20`), so it reads back as a real.
/// - A `Double` that is not finite, and nesting deeper than ``JSONParser/maximumDepth``, cannot
///   be written: the writer throws rather than produce text the parser refuses.
public enum JSONWriter {
    /// The JSON text of a value.
    /// - Parameter value: the value.
    /// - Returns: the UTF-8 text.
    /// - Throws: ``JSONError`` (``JSONError/Reason/nonFiniteNumber`` or ``JSONError/Reason/tooDeep``).
    public static func data(_ value: JSONValue) throws -> Data {
        var output = JSONOutput()
        try output.write(value, depth: 0)
        return Data(output.bytes)
    }

    /// The JSON text of an object.
    /// - Parameter object: the object.
    /// - Returns: the UTF-8 text.
    /// - Throws: ``JSONError`` (``JSONError/Reason/nonFiniteNumber`` or ``JSONError/Reason/tooDeep``).
    public static func data(_ object: JSONObject) throws -> Data {
        var output = JSONOutput()
        try output.write(object, depth: 0)
        return Data(output.bytes)
    }

    /// The JSON text of an array of objects (a page of items).
    /// - Parameter objects: the objects.
    /// - Returns: the UTF-8 text.
    /// - Throws: ``JSONError`` (``JSONError/Reason/nonFiniteNumber`` or ``JSONError/Reason/tooDeep``).
    public static func data(_ objects: [JSONObject]) throws -> Data {
        var output = JSONOutput()
        try output.writeArray(objects, depth: 0) { output, object, depth throws(JSONError) in try output.write(object, depth: depth) }
        return Data(output.bytes)
    }

    /// The JSON text of a value, as a string.
    /// - Parameter value: the value.
    /// - Returns: the text.
    /// - Throws: ``JSONError`` (``JSONError/Reason/nonFiniteNumber`` or ``JSONError/Reason/tooDeep``).
    public static func string(_ value: JSONValue) throws -> String {
        var output = JSONOutput()
        try output.write(value, depth: 0)
        return String(decoding: output.bytes, as: UTF8.self)
    }
}

/// The text being written.
struct JSONOutput {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    /// Writes a value whose container is `depth` levels deep (0 for the top level).
    mutating func write(_ value: JSONValue, depth: Int) throws(JSONError) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let integer): write(integer)
        case .double(let real): try write(real)
        case .string(let text): write(text)
        case .array(let elements):
            try writeArray(elements, depth: depth) { output, element, depth throws(JSONError) in try output.write(element, depth: depth) }
        case .object(let object): try write(object, depth: depth)
        }
    }

    /// Writes an object, members sorted by the UTF-8 bytes of their names.
    mutating func write(_ object: JSONObject, depth: Int) throws(JSONError) {
        guard depth < JSONParser.maximumDepth else { throw JSONError(.tooDeep, at: nil) }
        bytes.append(ASCII.openBrace)
        var first = true
        for (name, member) in Self.sortedMembers(object) {
            if !first { bytes.append(ASCII.comma) }
            first = false
            write(name)
            bytes.append(ASCII.colon)
            try write(member, depth: depth + 1)
        }
        bytes.append(ASCII.closeBrace)
    }

    /// The members of an object in the order they are written: sorted by the UTF-8 bytes of their names.
    static func sortedMembers(_ object: JSONObject) -> [(key: String, value: JSONValue)] {
        object.sorted { utf8Precedes($0.key, $1.key) }
    }

    /// Whether `a`'s UTF-8 bytes sort before `b`'s: compared in place when both are stored as
    /// contiguous UTF-8 (native strings are), else byte by byte.
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        let inPlace = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order == 0 ? left.count < right.count : order < 0
            }
        }
        return (inPlace ?? nil) ?? a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Writes an array of elements, each with `write`.
    mutating func writeArray<Element>(
        _ elements: [Element], depth: Int, _ write: (inout JSONOutput, Element, Int) throws(JSONError) -> Void
    ) throws(JSONError) {
        guard depth < JSONParser.maximumDepth else { throw JSONError(.tooDeep, at: nil) }
        bytes.append(ASCII.openBracket)
        for (offset, element) in elements.enumerated() {
            if offset > 0 { bytes.append(ASCII.comma) }
            try write(&self, element, depth + 1)
        }
        bytes.append(ASCII.closeBracket)
    }

    /// Writes a string, escaping what JSON requires.
    mutating func write(_ text: String) {
        bytes.append(ASCII.quote)
        var text = text
        text.withUTF8 { appendEscaped($0) }
        bytes.append(ASCII.quote)
    }

    /// Appends UTF-8 text, copying runs that need no escape in one piece.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var run = 0
        for position in 0..<utf8.count {
            let byte = utf8[position]
            guard byte < 0x20 || byte == ASCII.quote || byte == ASCII.backslash else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<position]))
            run = position + 1
            switch byte {
            case ASCII.quote, ASCII.backslash:
                bytes.append(ASCII.backslash)
                bytes.append(byte)
            case 0x08: append("\\b")
            case ASCII.tab: append("\\t")
            case ASCII.lineFeed: append("\\n")
            case 0x0C: append("\\f")
            case ASCII.carriageReturn: append("\\r")
            default:
                append("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
    }

    /// Writes an integer in decimal.
    mutating func write(_ integer: Int64) {
        if integer < 0 { bytes.append(ASCII.minus) }
        var magnitude = integer.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = ASCII.zero + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Writes a finite double so that it reads back as the same real.
    mutating func write(_ real: Double) throws(JSONError) {
        guard real.isFinite else { throw JSONError(.nonFiniteNumber, at: nil) }
        // `description` is the shortest text that reads back as the same double, and it always
        // has a `.` or an `e` (`2.0`, `1e-05`, `5e-324`), so the parser keeps it a real.
        appendText(real.description)
    }

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendText(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
