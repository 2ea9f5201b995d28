/// Percent-decoding of a path segment or a query item, as Foundation's `removingPercentEncoding`
/// decodes it (`nil` for a `%` without two hexadecimal digits after it), without its cost on every
/// request: text with nothing to decode is returned as it is. Escaped bytes that are not UTF-8 are
/// refused (`nil`), where Foundation puts U+FFFD in the place of some of them: `%A9` and `%AA`
/// must not name one item.
/// The server decodes item ids in request paths and query items with it.
package enum PercentDecoding {
    /// The decoded text of `text`; with `plusAsSpace` (a query item), `+` stands for a space.
    package static func decode(_ text: String, plusAsSpace: Bool = false) -> String? {
        decode(text[...], plusAsSpace: plusAsSpace)
    }

    /// The decoded text of `text`; with `plusAsSpace` (a query item), `+` stands for a space.
    package static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == ASCII.percent || (plusAsSpace && $0 == ASCII.plus) }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            if byte == ASCII.plus && plusAsSpace {
                bytes.append(ASCII.space)
            } else if byte == ASCII.percent {
                guard index != utf8.endIndex, let high = ASCII.hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                guard index != utf8.endIndex, let low = ASCII.hexValue(utf8[index]) else { return nil }
                utf8.formIndex(after: &index)
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
