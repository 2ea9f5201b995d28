/// Rules for passphrases: not empty, at most ``maximumLength`` bytes, Unicode NFC.
public enum Passphrase {
    /// The longest passphrase accepted, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// The passphrase in Unicode Normalization Form C, so the same text typed on any platform
    /// gives the same bytes.
    ///
    /// The normalisation works on the bytes, in scratch buffers that are wiped before they are
    /// freed: the passphrase never becomes a `String`. ASCII is returned as it is; input that is
    /// not UTF-8 is used as given.
    ///
    /// - Throws: ``KeyError/emptyPassphrase``, or ``KeyError/passphraseTooLong`` when the
    ///   passphrase (or its normal form) is longer than ``maximumLength`` bytes.
    public static func normalized(_ passphrase: SecretBytes) throws(KeyError) -> SecretBytes {
        guard !passphrase.isEmpty else { throw .emptyPassphrase }
        guard passphrase.count <= maximumLength else { throw .passphraseTooLong }
        let isASCII = passphrase.withUnsafeBytes { $0.allSatisfy { $0 < 0x80 } }
        if isASCII { return passphrase }
        guard let normalized = passphrase.withUnsafeBytes({ NFC.normalize($0) }) else { return passphrase }
        guard normalized.count <= maximumLength else { throw .passphraseTooLong }
        return normalized
    }
}
