public import Foundation

/// A JSON value: the payload type of every item the SDK stores, sends and receives.
///
/// Integers and reals are kept apart so that an id-like integer survives a round trip through
/// the local store and the wire without turning into `1.0`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object, the shape of one item (a row) of a table.
public typealias JSONObject = [String: JSONValue]

extension JSONValue {
    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The Boolean, if this is a Boolean.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The number as an `Int64`, if this is an integer (or a real with no fractional part).
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    /// The object, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The array, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Whether this is JSON `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// `Codable`, for a value inside other `Codable` types. JSON text of a `JSONValue`, a
/// `JSONObject` or an array of them goes through ``JSONCoding``, which reads and writes it with
/// ``JSONParser`` and ``JSONWriter`` instead.
extension JSONValue: Codable {
    /// Decodes whatever value the decoder holds.
    ///
    /// A decoder cannot be asked what it holds, only to decode a type, and every refusal is a
    /// thrown error; so the kinds are tried from the most common in items (strings) on, each at
    /// most once: a string costs no refused attempt, a Boolean one, a number two, an object three
    /// and an array four. An integral number that fits `Int64` decodes as ``int(_:)`` (the
    /// decoder does not say whether the text had a fraction).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let real = try? container.decode(Double.self) {
            let isIntegral = real.rounded(.towardZero) == real && abs(real) <= 9.3e18
            self = isIntegral ? ((try? container.decode(Int64.self)).map(JSONValue.int) ?? .double(real)) : .double(real)
        } else if let object = try? container.decode(JSONObject.self) {
            self = .object(object)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Encodes the value as the encoder's null, Boolean, number, string, array or dictionary.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` is JSON `null`.
    ///
    /// - Parameter nilLiteral: The literal.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean literal is a JSON Boolean.
    ///
    /// - Parameter value: The literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal is a JSON integer.
    ///
    /// - Parameter value: The literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A floating-point literal is a JSON double.
    ///
    /// - Parameter value: The literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string literal is a JSON string.
    ///
    /// - Parameter value: The literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal is a JSON array.
    ///
    /// - Parameter elements: The elements.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A dictionary literal is a JSON object; of two equal names the last wins.
    ///
    /// - Parameter elements: The members.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

/// Encoding and decoding of JSON text, with one configuration for the whole SDK.
///
/// ``JSONValue``, ``JSONObject``, `[JSONObject]` and `[JSONValue]` are read by the strict
/// ``JSONParser`` and written by ``JSONWriter``; other `Codable` types use Foundation's
/// `JSONDecoder` and `JSONEncoder` (sorted keys, `/` unescaped).
public enum JSONCoding {
    /// Encodes a value as compact JSON with sorted keys (stable bytes for tests and hashes).
    /// - Throws: ``JSONError`` for a JSON value that cannot be written (a `Double` that is not
    ///   finite, nesting deeper than ``JSONParser/maximumDepth``); `EncodingError` for other types.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        if T.self == JSONObject.self, let object = value as? JSONObject { return try JSONWriter.data(object) }
        if T.self == [JSONObject].self, let objects = value as? [JSONObject] { return try JSONWriter.data(objects) }
        if T.self == JSONValue.self, let json = value as? JSONValue { return try JSONWriter.data(json) }
        if T.self == [JSONValue].self, let array = value as? [JSONValue] { return try JSONWriter.data(.array(array)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Decodes a value from JSON text.
    /// - Throws: ``JSONError`` when a JSON value, object or array is asked for and the text is not
    ///   strict RFC 8259 JSON of that shape; `DecodingError` for other types.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if T.self == JSONObject.self, let object = try JSONParser.parseObject(data) as? T { return object }
        if T.self == [JSONObject].self, let objects = try JSONParser.parseObjects(data) as? T { return objects }
        if T.self == JSONValue.self, let json = try JSONParser.parse(data) as? T { return json }
        if T.self == [JSONValue].self, let array = try JSONParser.parseArray(data) as? T { return array }
        return try JSONDecoder().decode(type, from: data)
    }

    /// Encodes an object as a JSON string.
    /// - Throws: ``JSONError`` when the object cannot be written.
    public static func string(_ object: JSONObject) throws -> String {
        String(decoding: try JSONWriter.data(object), as: UTF8.self)
    }

    /// Decodes a JSON object from a string.
    /// - Throws: ``JSONError`` when the text is not strict JSON or not an object.
    public static func object(from text: String) throws -> JSONObject {
        try JSONParser.parseObject(text)
    }
}
