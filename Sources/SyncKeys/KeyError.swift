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
    /// The PIN of a TPM slot is wrong (the TPM counted the failure toward its lockout).
    case wrongPIN
    /// The TPM refuses PIN-protected keys for now: too many wrong PINs (dictionary-attack lockout).
    case tpmLockedOut
    /// The TPM does not hold the slot's key: the store was moved to another device, the TPM was
    /// cleared, or the slot's key was evicted.
    case tpmKeyMissing
    /// The TPM refused the slot's PCR policy: the measured boot state differs from when the slot
    /// was made.
    case tpmPolicyRefused
    /// The TPM cannot be reached, or it failed an operation (the named operation and the TSS's
    /// decoded return code).
    case tpmFailure(String)
    /// The envelope has no slot with this id.
    case slotMissing(String)
    /// The store was shredded: its key envelope holds no key any more.
    case shredded

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
        case .wrongPIN: return "The PIN is wrong."
        case .tpmLockedOut:
            return
                "The TPM is locked out after too many wrong PINs; wait for its recovery time or clear the lockout with the TPM's lockout authorization."
        case .tpmKeyMissing:
            return "This TPM does not hold the key of the store's TPM slot (another device, a cleared TPM, or a removed slot)."
        case .tpmPolicyRefused: return "The TPM refused the slot's PCR policy: the boot state differs from when the slot was made."
        case .tpmFailure(let why): return "The TPM failed (\(why))."
        case .slotMissing(let id): return "The store has no '\(id)' key slot."
        case .shredded: return "The store was shredded: no key can open it any more."
        }
    }
}
