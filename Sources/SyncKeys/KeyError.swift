import Foundation

/// An error of key derivation, wrapping or the key envelope.
///
/// A struct around a private code, so that kinds can be added later without breaking callers.
/// Compare with the static members, which match on the kind only; the detail of an occurrence
/// (what is damaged, which operation failed, the length or version met) is in ``reason``:
///
/// ```swift
/// do { try envelope.unlockKeys(with: .passphrase(passphrase)) }
/// catch KeyError.wrongPassphrase { … }
/// catch let error as KeyError where error == .envelopeCorrupt { log(error.description) }
/// ```
///
/// Descriptions are one sentence and never contain key material or passphrases. A failed
/// unwrap says only that it failed.
public struct KeyError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        case wrongPassphrase, keyMaterialMissing, envelopeCorrupt, unsupportedEnvelopeVersion, weakKeyDerivation
        case emptyPassphrase, passphraseTooLong, invalidKeyLength, unwrapFailed, cryptoFailure, writeFailed
        case wrongPIN, tpmLockedOut, tpmKeyMissing, tpmPolicyRefused, tpmFailure, slotMissing, shredded
    }

    package let code: Code
    /// The detail of this occurrence, when its kind has one: what is wrong with the envelope, the
    /// version or key length met, the operation that failed, the slot's id. Never key material.
    public let reason: String?
    /// The system's error number of a failed file operation (``writeFailed``), so that a store
    /// can tell a full disk or an I/O error from another failure.
    package let errorNumber: Int32?

    init(_ code: Code, reason: String? = nil, errorNumber: Int32? = nil) {
        self.code = code
        self.reason = reason
        self.errorNumber = errorNumber
    }

    /// A sentence for a person; it never holds key material.
    public var description: String {
        let detail = reason ?? "no detail"
        switch code {
        case .wrongPassphrase: return "The passphrase is wrong."
        case .keyMaterialMissing: return "The key envelope is missing or unreadable."
        case .envelopeCorrupt: return "The key envelope is damaged or was modified (\(detail))."
        case .unsupportedEnvelopeVersion: return "The key envelope has an unsupported version (\(detail))."
        case .weakKeyDerivation: return "The key derivation parameters are below the required floor (\(detail))."
        case .emptyPassphrase: return "The passphrase is empty."
        case .passphraseTooLong: return "The passphrase is longer than \(Passphrase.maximumLength) bytes."
        case .invalidKeyLength: return "A key of \(detail) bytes is not valid here."
        case .unwrapFailed: return "The wrapped key could not be unwrapped."
        case .cryptoFailure: return "A cryptographic operation failed (\(detail))."
        case .writeFailed: return "The key envelope could not be written (\(detail))."
        case .wrongPIN: return "The PIN is wrong."
        case .tpmLockedOut:
            return
                "The TPM is locked out after too many wrong PINs; wait for its recovery time or clear the lockout with the TPM's lockout authorization."
        case .tpmKeyMissing:
            return "This TPM does not hold the key of the store's TPM slot (another device, a cleared TPM, or a removed slot)."
        case .tpmPolicyRefused: return "The TPM refused the slot's PCR policy: the boot state differs from when the slot was made."
        case .tpmFailure: return "The TPM failed (\(detail))."
        case .slotMissing: return "The store has no '\(detail)' key slot."
        case .shredded: return "The store was shredded: no key can open it any more."
        }
    }
}

extension KeyError: Equatable, Hashable, KindedError {
    /// Matches any error against a `KeyError` kind, so that `catch KeyError.wrongPassphrase` works.
    public static func ~= (pattern: KeyError, value: any Error) -> Bool { pattern.matches(value) }
}

extension KeyError {
    // MARK: passphrases and envelopes

    /// The passphrase (or recovery code) does not unlock the envelope.
    public static let wrongPassphrase = KeyError(.wrongPassphrase)
    /// The key envelope file does not exist or cannot be read.
    public static let keyMaterialMissing = KeyError(.keyMaterialMissing)
    /// The envelope is not valid JSON of the expected shape, or its checksum or MAC failed (the kind).
    public static let envelopeCorrupt = KeyError(.envelopeCorrupt)
    /// The envelope has a format or version this build does not know (the kind).
    public static let unsupportedEnvelopeVersion = KeyError(.unsupportedEnvelopeVersion)
    /// The envelope's key-derivation parameters are below the floor (the kind).
    public static let weakKeyDerivation = KeyError(.weakKeyDerivation)
    /// An empty passphrase.
    public static let emptyPassphrase = KeyError(.emptyPassphrase)
    /// A passphrase longer than ``Passphrase/maximumLength`` bytes.
    public static let passphraseTooLong = KeyError(.passphraseTooLong)
    /// A key of the wrong length for the operation (the kind).
    public static let invalidKeyLength = KeyError(.invalidKeyLength)
    /// Unwrapping failed: wrong key-encryption key or modified wrapped key.
    public static let unwrapFailed = KeyError(.unwrapFailed)
    /// OpenSSL reported an error (the kind).
    public static let cryptoFailure = KeyError(.cryptoFailure)
    /// Writing the envelope failed (the kind).
    public static let writeFailed = KeyError(.writeFailed)
    /// The envelope has no slot with the id asked for (the kind).
    public static let slotMissing = KeyError(.slotMissing)
    /// The store was shredded: its key envelope holds no key any more.
    public static let shredded = KeyError(.shredded)

    /// The envelope is not valid JSON of the expected shape, or its checksum or MAC failed.
    ///
    /// - Parameter reason: What is wrong with it.
    public static func envelopeCorrupt(_ reason: String) -> KeyError { KeyError(.envelopeCorrupt, reason: reason) }
    /// The envelope has a format or version this build does not know.
    ///
    /// - Parameter version: The version the envelope names.
    public static func unsupportedEnvelopeVersion(_ version: Int) -> KeyError {
        KeyError(.unsupportedEnvelopeVersion, reason: String(version))
    }
    /// The envelope's key-derivation parameters are below the floor.
    ///
    /// - Parameter reason: Which parameter is below it.
    public static func weakKeyDerivation(_ reason: String) -> KeyError { KeyError(.weakKeyDerivation, reason: reason) }
    /// A key of the wrong length for the operation.
    ///
    /// - Parameter length: The key's length in bytes.
    public static func invalidKeyLength(_ length: Int) -> KeyError { KeyError(.invalidKeyLength, reason: String(length)) }
    /// OpenSSL reported an error.
    ///
    /// - Parameter operation: The operation that failed.
    public static func cryptoFailure(_ operation: String) -> KeyError { KeyError(.cryptoFailure, reason: operation) }
    /// Writing the envelope failed.
    ///
    /// - Parameter reason: Why.
    public static func writeFailed(_ reason: String) -> KeyError { KeyError(.writeFailed, reason: reason) }
    /// Writing the envelope failed with the system's error number `code` (its `strerror` text is the reason).
    package static func writeFailed(errorNumber code: Int32) -> KeyError {
        KeyError(.writeFailed, reason: String(cString: strerror(code)), errorNumber: code)
    }
    /// The envelope has no slot with this id.
    ///
    /// - Parameter id: The slot's id.
    public static func slotMissing(_ id: String) -> KeyError { KeyError(.slotMissing, reason: id) }

    // MARK: TPM slots

    /// The PIN of a TPM slot is wrong (the TPM counted the failure toward its lockout).
    public static let wrongPIN = KeyError(.wrongPIN)
    /// The TPM refuses PIN-protected keys for now: too many wrong PINs (dictionary-attack lockout).
    public static let tpmLockedOut = KeyError(.tpmLockedOut)
    /// The TPM does not hold the slot's key: the store was moved to another device, the TPM was
    /// cleared, or the slot's key was evicted.
    public static let tpmKeyMissing = KeyError(.tpmKeyMissing)
    /// The TPM refused the slot's PCR policy: the measured boot state differs from when the slot
    /// was made.
    public static let tpmPolicyRefused = KeyError(.tpmPolicyRefused)
    /// The TPM cannot be reached, or it failed an operation (the kind).
    public static let tpmFailure = KeyError(.tpmFailure)

    /// The TPM cannot be reached, or it failed an operation.
    ///
    /// - Parameter reason: The operation and the TSS's decoded return code.
    public static func tpmFailure(_ reason: String) -> KeyError { KeyError(.tpmFailure, reason: reason) }
}
