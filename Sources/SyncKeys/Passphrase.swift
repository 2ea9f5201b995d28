import Foundation

/// Rules for passphrases: not empty, at most ``maximumLength`` bytes, Unicode NFC.
public enum Passphrase {
    /// The longest passphrase accepted, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// The passphrase in Unicode Normalization Form C, so the same text typed on any platform
    /// gives the same bytes.
    ///
    /// Normalising needs a transient `String`, which cannot be wiped; it lives only inside this
    /// call. Input that is not UTF-8 is used as given.
    public static func normalized(_ passphrase: SecretBytes) throws(KeyError) -> SecretBytes {
        guard !passphrase.isEmpty else { throw .emptyPassphrase }
        guard passphrase.count <= maximumLength else { throw .passphraseTooLong }
        let isASCII = passphrase.withUnsafeBytes { $0.allSatisfy { $0 < 0x80 } }
        if isASCII { return passphrase }
        guard let text = passphrase.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else { return passphrase }
        var bytes = Array(text.precomposedStringWithCanonicalMapping.utf8)
        guard bytes.count <= maximumLength else { throw .passphraseTooLong }
        return SecretBytes(wiping: &bytes)
    }
}
