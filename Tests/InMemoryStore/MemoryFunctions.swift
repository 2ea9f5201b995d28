import CipherSync
import Foundation

/// The OData functions of a filter, on values in memory.
enum MemoryFunctions {
    static func apply(_ function: FilterFunction, _ arguments: [JSONValue]) throws -> JSONValue {
        if arguments.contains(where: \.isNull) { return .null }
        let texts = arguments.map(\.stringValue)
        switch function {
        case .tolower: return texts[0].map { .string($0.lowercased()) } ?? .null
        case .toupper: return texts[0].map { .string($0.uppercased()) } ?? .null
        case .trim: return texts[0].map { .string($0.trimmingCharacters(in: .whitespaces)) } ?? .null
        case .length: return texts[0].map { .int(Int64($0.count)) } ?? .null
        case .substringof: return both(texts) { needle, text in text.contains(needle) }
        case .contains: return both(texts) { text, needle in text.contains(needle) }
        case .startswith: return both(texts) { text, prefix in text.hasPrefix(prefix) }
        case .endswith: return both(texts) { text, suffix in text.hasSuffix(suffix) }
        case .concat: return .string(texts.compactMap { $0 }.joined())
        case .indexof:
            guard let text = texts[0], let needle = texts[1] else { return .null }
            guard let range = text.range(of: needle) else { return .int(-1) }
            return .int(Int64(text.distance(from: text.startIndex, to: range.lowerBound)))
        case .year, .month, .day, .hour, .minute, .second:
            guard let date = texts[0].flatMap(date) else { return .null }
            let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC") ?? .current, from: date)
            let part = [.year: parts.year, .month: parts.month, .day: parts.day, .hour: parts.hour, .minute: parts.minute, .second: parts.second][
                function]
            return (part ?? nil).map { .int(Int64($0)) } ?? .null
        case .floor: return arguments[0].doubleValue.map { .double($0.rounded(.down)) } ?? .null
        case .ceiling: return arguments[0].doubleValue.map { .double($0.rounded(.up)) } ?? .null
        case .round: return arguments[0].doubleValue.map { .double($0.rounded()) } ?? .null
        case .replace, .substring: throw StoreError.invalidQuery("\(function.rawValue) is not supported by the in-memory store")
        }
    }

    private static func both(_ texts: [String?], _ test: (String, String) -> Bool) -> JSONValue {
        guard texts.count == 2, let a = texts[0], let b = texts[1] else { return .null }
        return .bool(test(a, b))
    }

    /// A date written as ISO 8601 text (with or without fractions of a second).
    static func date(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
