/// Percent-decoding of a path segment or a query item, as Foundation's `removingPercentEncoding`
/// decodes it (`nil` for a `%` without two hexadecimal digits after it), without its cost on every
/// request: text with nothing to decode is returned as it is. Escaped bytes that are not UTF-8 are
/// refused (`nil`), where Foundation puts U+FFFD in the place of some of them: `%A9` and `%AA`
/// must not name one item.
/// The server decodes item ids in request paths and query items with it.
public enum PercentDecoding {
    /// The decoded text of `text`; with `plusAsSpace` (a query item), `+` stands for a space.
    public static func decode(_ text: String, plusAsSpace: Bool = false) -> String? {
        decode(text[...], plusAsSpace: plusAsSpace)
    }

    /// The decoded text of `text`; with `plusAsSpace` (a query item), `+` stands for a space.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == percent || (plusAsSpace && $0 == plus) }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            if byte == plus && plusAsSpace {
                bytes.append(UInt8(ascii: " "))
            } else if byte == percent {
                guard index != utf8.endIndex, let high = hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                guard index != utf8.endIndex, let low = hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static let percent = UInt8(ascii: "%")
    private static let plus = UInt8(ascii: "+")

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
