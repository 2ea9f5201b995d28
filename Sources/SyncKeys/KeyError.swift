/// An error of key derivation, wrapping or the key envelope.
///
/// Descriptions are one sentence and never contain key material or passphrases. A failed
/// unwrap says only that it failed.
public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The passphrase (or recovery code) does not unlock the envelope.
    case wrongPassphrase
    /// The key envelope file does not exist or cannot be read.
    case keyMaterialMissing
    /// The envelope is not valid JSON of the expected shape, or its checksum or MAC failed.
    case envelopeCorrupt(String)
    /// The envelope has a format or version this build does not know.
    case unsupportedEnvelopeVersion(Int)
    /// The envelope's key-derivation parameters are below the floor.
    case weakKeyDerivation(String)
    /// An empty passphrase.
    case emptyPassphrase
    /// A passphrase longer than ``Passphrase/maximumLength`` bytes.
    case passphraseTooLong
    /// A key of the wrong length for the operation.
    case invalidKeyLength(Int)
    /// Unwrapping failed: wrong key-encryption key or modified wrapped key.
    case unwrapFailed
    /// OpenSSL reported an error in the named operation.
    case cryptoFailure(String)
    /// Writing the envelope failed.
    case writeFailed(String)

    /// A sentence for a person; it never holds key material.
    public var description: String {
        switch self {
        case .wrongPassphrase: return "The passphrase is wrong."
        case .keyMaterialMissing: return "The key envelope is missing or unreadable."
        case .envelopeCorrupt(let why): return "The key envelope is damaged or was modified (\(why))."
        case .unsupportedEnvelopeVersion(let v): return "The key envelope has an unsupported version (\(v))."
        case .weakKeyDerivation(let why): return "The key derivation parameters are below the required floor (\(why))."
        case .emptyPassphrase: return "The passphrase is empty."
        case .passphraseTooLong: return "The passphrase is longer than \(Passphrase.maximumLength) bytes."
        case .invalidKeyLength(let n): return "A key of \(n) bytes is not valid here."
        case .unwrapFailed: return "The wrapped key could not be unwrapped."
        case .cryptoFailure(let op): return "A cryptographic operation failed (\(op))."
        case .writeFailed(let why): return "The key envelope could not be written (\(why))."
        }
    }
}
