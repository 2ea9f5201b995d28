import Foundation
public import SyncKeys
public import SyncSQLite

/// An error of the local store or of its key maintenance.
///
/// A struct around a private code, so that kinds can be added later without breaking anyone's
/// `switch` (async-http-client's pattern, as `SyncError` in SyncClient). Errors compare by kind:
/// `==` and pattern matching look at the kind only, never at the ``reason``, so both of these work:
///
/// ```swift
/// do { _ = try await SQLiteStore.open(at: url, encryption: .passphrase(passphrase)) }
/// catch StoreError.wrongPassphrase { … }          // ask again
/// catch let error as StoreError where error == .storeInUse { … }
/// ```
///
/// The kinds a user can act on are distinct: a wrong passphrase is not a damaged file, and neither
/// is a missing key envelope. A failure of the key envelope keeps the `KeyError` that caused it as
/// ``underlyingError``; the store's kinds only sort those failures by what the user can do (try
/// another passphrase, restore the key file, choose a valid passphrase). Descriptions never contain
/// keys, passphrases or item values.
///
/// It lives in SyncKeyMaintenance, the lower of the two modules that throw it: the store
/// (SyncStore) depends on key maintenance to open an encrypted database (unlock the envelope,
/// finish an interrupted rotation, take the store lock), so key maintenance cannot see anything
/// declared in the store. SyncStore re-exports this module, so `import SyncStore` is enough to
/// catch it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        // keys
        case wrongPassphrase, keyMaterialMissing, keyMaterialCorrupt, invalidPassphrase
        // files
        case corruptOrKeyMismatch, storeNotFound, storeAlreadyExists, encryptionMismatch
        case fileSystem, storeInUse, verificationFailed
        // the disk
        case diskFull, ioError
        // contents
        case invalidTableName, invalidItem, invalidQuery
        // the store itself
        case closed, database
        // TPM slots and shredding
        case wrongPIN, tpmLockedOut, tpmUnavailable, slotMissing, shredded
    }

    package let code: Code
    /// What this occurrence is about: a path, the part of an item that is refused, the problem a
    /// check found. Never a key, a passphrase or an item value.
    public let reason: String?
    /// The error that caused this one: the `KeyError` of a key failure, the `SQLiteError` of a
    /// ``database`` error.
    public let underlyingError: (any Error)?

    init(_ code: Code, reason: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.reason = reason
        self.underlyingError = underlying
    }

    /// The same kind of error as `error`, with the same underlying error and another reason.
    ///
    /// - Parameters:
    ///   - error: The error whose kind and underlying error are kept.
    ///   - reason: The sentence for this occurrence.
    public init(_ error: StoreError, reason: String) {
        self.init(error.code, reason: reason, underlying: error.underlyingError)
    }

    /// The one sentence for a user, with the ``reason`` where it adds to it.
    public var description: String {
        switch code {
        case .wrongPassphrase: return "The passphrase is wrong."
        case .keyMaterialMissing: return "The store's key file is missing or unreadable."
        case .keyMaterialCorrupt: return "The store's key file is damaged or was modified: \(reason ?? "unknown damage")"
        case .corruptOrKeyMismatch: return "The database file is damaged or does not belong to this key."
        case .storeNotFound: return "No store at \(reason ?? "the path")."
        case .storeAlreadyExists: return "A store already exists at \(reason ?? "the path")."
        case .invalidTableName: return "'\(reason ?? "")' is not a valid table name."
        case .invalidItem: return "Invalid item: \(reason ?? "refused by the store")"
        case .invalidQuery: return "Invalid query: \(reason ?? "refused by the store")"
        case .closed: return "The store is closed."
        case .database: return reason ?? "An SQLite error occurred."
        case .verificationFailed:
            return "The re-encrypted copy failed its check (\(reason ?? "unknown")); the store was left unchanged."
        case .diskFull:
            return reason
                ?? "The disk is full; the last change was not saved. Free some disk space, then try again (and sync again); what was saved before is kept."
        case .ioError:
            return reason
                ?? "A disk I/O error occurred; the last change was not saved. Check the disk (failing, removed or read-only?), then try again (and sync again); what was saved before is kept."
        case .invalidPassphrase, .encryptionMismatch, .fileSystem, .storeInUse:
            return reason ?? kindName
        case .wrongPIN, .tpmLockedOut, .tpmUnavailable, .slotMissing, .shredded:
            return reason ?? kindName
        }
    }
}

extension StoreError: Equatable, Hashable, KindedError {
    /// Matches any error against a `StoreError` kind, so that `catch StoreError.wrongPassphrase` works.
    public static func ~= (pattern: StoreError, value: any Error) -> Bool { pattern.matches(value) }
}

extension StoreError {
    // MARK: keys

    /// The passphrase (or recovery code) does not unlock the store's key envelope.
    public static let wrongPassphrase = StoreError(.wrongPassphrase)
    /// The key envelope beside the database is missing or unreadable.
    public static let keyMaterialMissing = StoreError(.keyMaterialMissing)
    /// The key envelope was modified or is not a valid envelope (the kind, for comparisons).
    public static let keyMaterialCorrupt = StoreError(.keyMaterialCorrupt)
    /// The passphrase is not acceptable: empty or too long (the kind, for comparisons).
    public static let invalidPassphrase = StoreError(.invalidPassphrase)

    /// The key envelope was modified or is not a valid envelope.
    ///
    /// - Parameter reason: What is wrong with it.
    public static func keyMaterialCorrupt(_ reason: String) -> StoreError { StoreError(.keyMaterialCorrupt, reason: reason) }
    /// The passphrase is not acceptable.
    ///
    /// - Parameter reason: The sentence telling the user why.
    public static func invalidPassphrase(_ reason: String) -> StoreError { StoreError(.invalidPassphrase, reason: reason) }

    /// The store error for a failure of the key envelope, which it keeps as ``underlyingError``.
    ///
    /// - Parameter error: The key error.
    public init(_ error: KeyError) {
        switch error {
        case KeyError.wrongPassphrase: self.init(.wrongPassphrase, underlying: error)
        case KeyError.keyMaterialMissing: self.init(.keyMaterialMissing, underlying: error)
        case KeyError.emptyPassphrase, KeyError.passphraseTooLong: self.init(.invalidPassphrase, reason: error.description, underlying: error)
        case KeyError.writeFailed: self = .keyFileNotWritten(error, path: nil)
        case KeyError.wrongPIN: self.init(.wrongPIN, reason: error.description, underlying: error)
        case KeyError.tpmLockedOut: self.init(.tpmLockedOut, reason: error.description, underlying: error)
        case KeyError.tpmKeyMissing, KeyError.tpmPolicyRefused, KeyError.tpmFailure:
            self.init(.tpmUnavailable, reason: error.description, underlying: error)
        case KeyError.slotMissing: self.init(.slotMissing, reason: error.description, underlying: error)
        case KeyError.shredded: self.init(.shredded, reason: error.description, underlying: error)
        default: self.init(.keyMaterialCorrupt, reason: error.description, underlying: error)
        }
    }

    /// The store error for a key file that could not be written: ``diskFull`` when the disk is full
    /// (or the user's quota is used up), ``ioError`` for an I/O error, ``fileSystem`` otherwise.
    ///
    /// - Parameters:
    ///   - error: The key error (``KeyError/writeFailed``), kept as ``underlyingError``.
    ///   - path: The key file, when the caller knows it.
    package static func keyFileNotWritten(_ error: KeyError, path: String?) -> StoreError {
        let file = path.map { "the key file \($0)" } ?? "the key file"
        let detail = error.reason ?? "no detail"
        switch error.errorNumber {
        case let code? where StoreFiles.isOutOfSpace(code):
            return StoreError(
                .diskFull, reason: "Disk full: cannot write \(file) (\(detail)). Free some disk space, then run the command again.",
                underlying: error)
        case EIO?:
            return StoreError(
                .ioError, reason: "A disk I/O error occurred while writing \(file); the disk may be failing. Check it, then run the command again.",
                underlying: error)
        default:
            return StoreError(.fileSystem, reason: "Cannot write \(file): \(detail).", underlying: error)
        }
    }

    // MARK: TPM slots and shredding

    /// The PIN of the store's TPM slot is wrong; the TPM counted it toward its lockout (the kind).
    public static let wrongPIN = StoreError(.wrongPIN)
    /// The TPM refuses PIN-protected keys after too many wrong PINs (the kind).
    public static let tpmLockedOut = StoreError(.tpmLockedOut)
    /// The TPM slot cannot be used here: the TPM cannot be reached, does not hold the slot's key
    /// (another device), or refused its PCR policy (the kind).
    public static let tpmUnavailable = StoreError(.tpmUnavailable)
    /// The store has no key slot of the kind asked for (the kind).
    public static let slotMissing = StoreError(.slotMissing)
    /// The store was shredded: nothing opens it any more (the kind).
    public static let shredded = StoreError(.shredded)

    // MARK: files

    /// The key opened the envelope but not the database: the file is damaged or belongs to
    /// another key.
    public static let corruptOrKeyMismatch = StoreError(.corruptOrKeyMismatch)
    /// There is no store at the path, and creating one was not asked for (the kind).
    public static let storeNotFound = StoreError(.storeNotFound)
    /// A store already exists at the path (the kind).
    public static let storeAlreadyExists = StoreError(.storeAlreadyExists)
    /// The file is an encrypted store but was opened without a key, or the reverse (the kind).
    public static let encryptionMismatch = StoreError(.encryptionMismatch)
    /// A file-system operation failed (the kind).
    public static let fileSystem = StoreError(.fileSystem)
    /// Another program holds the store, or a key rotation is running on it (the kind).
    public static let storeInUse = StoreError(.storeInUse)
    /// A re-encrypted copy failed its check; the original database was kept (the kind).
    public static let verificationFailed = StoreError(.verificationFailed)

    /// There is no store at `path`, and creating one was not asked for.
    ///
    /// - Parameter path: The database path.
    public static func storeNotFound(_ path: String) -> StoreError { StoreError(.storeNotFound, reason: path) }
    /// A store already exists at `path`.
    ///
    /// - Parameter path: The existing file.
    public static func storeAlreadyExists(_ path: String) -> StoreError { StoreError(.storeAlreadyExists, reason: path) }
    /// The file is an encrypted store but was opened without a key, or the reverse.
    ///
    /// - Parameter reason: The sentence telling the user what to do.
    public static func encryptionMismatch(_ reason: String) -> StoreError { StoreError(.encryptionMismatch, reason: reason) }
    /// A file-system operation failed.
    ///
    /// - Parameter reason: The sentence telling the user what failed, and where.
    public static func fileSystem(_ reason: String) -> StoreError { StoreError(.fileSystem, reason: reason) }
    /// Another program holds the store, or a key rotation is running on it.
    ///
    /// - Parameter reason: The sentence telling the user what to do.
    public static func storeInUse(_ reason: String) -> StoreError { StoreError(.storeInUse, reason: reason) }
    /// A re-encrypted copy failed its check; the original database was kept.
    ///
    /// - Parameter reason: The check that failed.
    public static func verificationFailed(_ reason: String) -> StoreError { StoreError(.verificationFailed, reason: reason) }

    // MARK: the disk

    /// The disk is full (the kind): nothing of the failed call was written.
    public static let diskFull = StoreError(.diskFull)
    /// The disk reported an I/O error (the kind): nothing of the failed call was written.
    public static let ioError = StoreError(.ioError)

    /// The disk is full: nothing of the failed call was written.
    ///
    /// - Parameter reason: The sentence telling the user what happened, where, and what to do.
    public static func diskFull(_ reason: String) -> StoreError { StoreError(.diskFull, reason: reason) }
    /// The disk reported an I/O error: nothing of the failed call was written.
    ///
    /// - Parameter reason: The sentence telling the user what happened, where, and what to do.
    public static func ioError(_ reason: String) -> StoreError { StoreError(.ioError, reason: reason) }

    // MARK: contents

    /// A table name that is not allowed (the kind).
    public static let invalidTableName = StoreError(.invalidTableName)
    /// An item or table definition the store cannot hold (the kind).
    public static let invalidItem = StoreError(.invalidItem)
    /// A query the store cannot evaluate (the kind).
    public static let invalidQuery = StoreError(.invalidQuery)

    /// A table name that is not allowed.
    ///
    /// - Parameter name: The refused name.
    public static func invalidTableName(_ name: String) -> StoreError { StoreError(.invalidTableName, reason: name) }
    /// An item (or table definition) the store cannot hold: no valid string `id`, too many
    /// properties, or two properties whose names differ only by case (SQLite column names ignore
    /// ASCII case, so both would be one column).
    ///
    /// - Parameter reason: What is wrong with it, without its values.
    public static func invalidItem(_ reason: String) -> StoreError { StoreError(.invalidItem, reason: reason) }
    /// A query the store cannot evaluate (unknown column, unsupported expression).
    ///
    /// - Parameter reason: What is wrong with it, without its values.
    public static func invalidQuery(_ reason: String) -> StoreError { StoreError(.invalidQuery, reason: reason) }

    // MARK: the store itself

    /// The store was closed.
    public static let closed = StoreError(.closed)
    /// An SQLite error that has no better description (the kind).
    public static let database = StoreError(.database)

    /// An SQLite error that has no better description; it is kept as ``underlyingError``.
    ///
    /// - Parameter error: The SQLite error.
    public static func database(_ error: SQLiteError) -> StoreError {
        StoreError(.database, reason: error.description, underlying: error)
    }
}
