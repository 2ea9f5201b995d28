/// Bytes as hexadecimal text (SHA-256 digests of attachment content on the wire).
package enum Hex {
    /// `bytes` as lowercase hex digits, two per byte.
    ///
    /// - Parameter bytes: Any bytes.
    /// - Returns: The text, e.g. `"00ff"` for `[0, 255]`.
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let digits = Array("0123456789abcdef".utf8)
}
