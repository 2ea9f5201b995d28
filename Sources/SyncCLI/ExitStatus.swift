import SyncKeyMaintenance
import SyncKeys

/// The exit codes of CipherSync's command-line tools. Scripts can rely on them.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what it was asked.
    case ok = 0
    /// The command failed (a file-system problem, a store in use, a failed check); nothing was
    /// changed unless the message says otherwise.
    case failure = 1
    /// The command line or an input was not acceptable (unknown option, empty or over-long
    /// passphrase, no way to read a passphrase, mismatched confirmation).
    case usage = 2
    /// The passphrase (or recovery code) does not unlock the store.
    case wrongPassphrase = 3
    /// The key material is missing or damaged: no key file, a modified key file, key-derivation
    /// parameters below the floor, or a database that the unlocked key does not open.
    case keyMaterial = 4
    /// The server cannot be reached (`todo`); the local changes stay queued.
    case offline = 5
    /// The disk is full: the command's change was not saved (or, for a key command, nothing was
    /// changed). Free some disk space, then run it again.
    case diskFull = 6
    /// The disk reported an I/O error: the command's change was not saved. Check the disk, then
    /// run it again.
    case ioError = 7
    /// The PIN of the TPM slot is wrong (the TPM counted the try toward its lockout).
    case wrongPIN = 8
    /// The TPM is locked out after too many wrong PINs (dictionary-attack protection).
    case tpmLockedOut = 9
    /// The TPM slot cannot be used here: the TPM cannot be reached, does not hold the slot's key
    /// (a store moved to another device, a cleared TPM), or refused the slot's PCR policy.
    case tpmUnavailable = 10
    /// A conflict's resolution would send the server the request it refused, unchanged (`todo
    /// conflicts`): nothing was changed; choose another resolution.
    case resolutionWouldRepeat = 11
    /// The server holds items whose ids differ only in letter case (`todo pull`, `sync`): one of
    /// each pair was left alone on the server; the rest of the pull was applied.
    case itemIDCaseClash = 12

    /// The exit status for an error thrown by a command.
    public static func `for`(_ error: any Error) -> ExitStatus {
        switch error {
        case let error as CLIError:
            return error.status
        case let error as StoreError:
            switch error {
            case StoreError.wrongPassphrase: return .wrongPassphrase
            case StoreError.keyMaterialMissing, StoreError.keyMaterialCorrupt, StoreError.corruptOrKeyMismatch, StoreError.slotMissing,
                StoreError.shredded:
                return .keyMaterial
            case StoreError.invalidPassphrase: return .usage
            case StoreError.wrongPIN: return .wrongPIN
            case StoreError.tpmLockedOut: return .tpmLockedOut
            case StoreError.tpmUnavailable: return .tpmUnavailable
            case StoreError.diskFull: return .diskFull
            case StoreError.ioError: return .ioError
            default: return .failure
            }
        case let error as KeyError:
            switch error {
            case KeyError.wrongPassphrase: return .wrongPassphrase
            case KeyError.keyMaterialMissing, KeyError.envelopeCorrupt, KeyError.unsupportedEnvelopeVersion, KeyError.weakKeyDerivation,
                KeyError.unwrapFailed, KeyError.slotMissing,
                KeyError.shredded:
                return .keyMaterial
            case KeyError.emptyPassphrase, KeyError.passphraseTooLong: return .usage
            case KeyError.wrongPIN: return .wrongPIN
            case KeyError.tpmLockedOut: return .tpmLockedOut
            case KeyError.tpmKeyMissing, KeyError.tpmPolicyRefused, KeyError.tpmFailure: return .tpmUnavailable
            default: return .failure
            }
        default:
            return .failure
        }
    }
}

/// An error of a command-line tool itself (bad input, no terminal for a prompt), with its exit
/// status and a one-line message for a field technician. Never carries secrets.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    /// The exit status the tool ends with.
    public var status: ExitStatus
    /// One line saying what is wrong and what to do.
    public var message: String

    /// An error.
    ///
    /// - Parameters:
    ///   - status: The exit status.
    ///   - message: One line, with no secret in it.
    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Bad input: exit status 2.
    public static func usage(_ message: String) -> CLIError { CLIError(.usage, message) }

    /// A failure: exit status 1.
    public static func failure(_ message: String) -> CLIError { CLIError(.failure, message) }
}
