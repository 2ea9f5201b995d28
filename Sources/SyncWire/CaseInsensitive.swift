import Foundation

/// Case-insensitive equality of names (header names, reserved property names), as Foundation's
/// `caseInsensitiveCompare(_:)` decides it.
package enum CaseInsensitive {
    /// Whether `a` and `b` are equal regardless of case. Two ASCII texts are compared byte by
    /// byte with their capitals folded (Foundation's rule on ASCII text, without its cost); any
    /// other pair as Foundation compares it.
    ///
    /// - Parameters:
    ///   - a: A text.
    ///   - b: Another text.
    /// - Returns: `true` when they differ at most by case.
    package static func equal(_ a: String, _ b: String) -> Bool {
        let (left, right) = (a.utf8, b.utf8)
        guard left.allSatisfy({ $0 < 0x80 }), right.allSatisfy({ $0 < 0x80 }) else {
            return a.caseInsensitiveCompare(b) == .orderedSame
        }
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { folded($0) == folded($1) }
    }

    /// An ASCII byte with a capital lowered.
    private static func folded(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
}
