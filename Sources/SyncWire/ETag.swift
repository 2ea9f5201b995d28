import Foundation

/// The entity tags of the tables protocol: an item's `version` in double quotes (an inner `"`
/// escaped as `\"`), sent by the server as `ETag` and by the client as `If-Match`.
///
/// A version names one exact state of an item, so tags compare **strongly** (RFC 9110
/// §8.8.3.2): a weak tag (`W/"…"`) never stands for a version. The client does not take a weak
/// `ETag` header as the item's version, and the server's `If-Match` never matches a weak tag
/// (a 412), even one that carries the current version. Client and server share these rules.
public enum ETag {
    /// The entity tag of `version`: in double quotes, an inner `"` escaped as `\"`.
    ///
    /// - Parameter version: The item's version.
    /// - Returns: The header value, e.g. `"AAAAAAAAB9E="`.
    public static func quote(_ version: String) -> String {
        // A version without a quote (a server's base64, say) is written as it is.
        guard version.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + version + "\"" }
        return "\"" + version.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The version a strong entity tag carries: quotes removed and `\"` unescaped; an unquoted
    /// value is taken as it is.
    ///
    /// - Parameter tag: An `ETag` or `If-Match` value.
    /// - Returns: The version, or `nil` for a weak tag (`W/"…"`) or an empty value.
    public static func version(from tag: String) -> String? {
        let trimmed = trimmingWhiteSpace(tag)
        guard !trimmed.hasPrefix("W/"), !trimmed.isEmpty else { return nil }
        // The quotes are found by their bytes (a `"` is one byte, never part of another character's).
        let bytes = trimmed.utf8
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return trimmed }
        let inner = String(Substring(bytes.dropFirst().dropLast()))
        guard inner.utf8.contains(UInt8(ascii: "\\")) else { return inner }
        return inner.replacingOccurrences(of: "\\\"", with: "\"")
    }

    /// Whether an `If-Match` value lets a write proceed on an item whose version is `version`:
    /// `*` matches any existing item; otherwise the strong tag must carry exactly `version`.
    ///
    /// - Parameters:
    ///   - ifMatch: The `If-Match` value.
    ///   - version: The stored item's version, or `nil` when it has none.
    /// - Returns: `true` when the condition holds; `false` for a weak tag or another version.
    public static func ifMatch(_ ifMatch: String, matches version: String?) -> Bool {
        if isWildcard(ifMatch) { return true }
        guard let version, let wanted = self.version(from: ifMatch) else { return false }
        return wanted == version
    }

    /// Whether an `If-Match` value is `*` (any existing item), white space around it allowed.
    public static func isWildcard(_ ifMatch: String) -> Bool {
        trimmingWhiteSpace(ifMatch) == "*"
    }

    /// `text` without the white space (`CharacterSet.whitespaces`) at its ends. A tag almost always
    /// starts and ends with a visible ASCII character: it is then returned as it is, without
    /// Foundation's trimming (a bridge through `NSString`, a few microseconds per tag).
    static func trimmingWhiteSpace(_ text: String) -> String {
        let visible: ClosedRange<UInt8> = 0x21...0x7E
        if let first = text.utf8.first, let last = text.utf8.last, visible.contains(first), visible.contains(last) { return text }
        return text.trimmingCharacters(in: .whitespaces)
    }
}
