/// Percent-encoding of a URL's path segment or query item as Foundation's
/// `addingPercentEncoding(withAllowedCharacters:)` encodes it with RFC 3986's unreserved characters
/// (letters, digits, `-._~`) allowed: every other byte of the UTF-8 text as `%` and two upper-case
/// hexadecimal digits, without building a `CharacterSet` per call; text with nothing to encode (an
/// ordinary table name or GUID) is returned as it is.
package enum PercentEncoding {
    /// The encoded text of `text`, keeping `kept` as it is too (a query keeps `$`, as in `$filter`).
    package static func encode(_ text: String, keeping kept: UInt8? = nil) -> String {
        let bytes = text.utf8
        let isKept = { (byte: UInt8) in isUnreserved(byte) || byte == kept }
        if bytes.allSatisfy(isKept) { return text }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            if isKept(byte) {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an unreserved character of RFC 3986 (a letter, a digit, `-._~`).
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
