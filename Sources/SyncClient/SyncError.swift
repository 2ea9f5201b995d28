public import SyncKeys
public import SyncStore
public import SyncWire

/// The error of the sync client: every failure of `SyncContext`, `SyncTable`, `RemoteTable` and
/// the transport surfaces as a `SyncError`.
///
/// A struct around a private code, so that cases can be added later without breaking callers
/// (async-http-client's pattern). Compare with the static members, which match on the code only:
///
/// ```swift
/// do { try await context.push() }
/// catch let error as SyncError where error == .pushCompletedWithErrors {
///     for failure in error.operationErrors { … }
/// }
/// ```
///
/// Descriptions never contain item values, keys or passphrases; server items travel in
/// ``serverItem`` and ``operationErrors``, never in ``description``.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        // local validation
        case invalidURL, invalidTableName, invalidItem, invalidItemID, operationNotAllowed, itemAlreadyExists, itemNotFound
        case invalidQuery, invalidQueryID, invalidPullQuery, invalidPurgeQuery, invalidSetting
        // push
        case pushCompletedWithErrors, pushAbortedByNetwork, pushAbortedByAuthentication
        case pushAbortedByLocalStore, pushCancelled
        // pull and purge
        case pullCancelled, purgeBlockedByPendingOperations, purgeCancelled
        case itemIDCaseClash
        // resolution of operation errors
        case operationNotFound, operationChanged
        case resolutionWouldRepeat
        // requests
        case transportFailed, authenticationRequired, conflict, preconditionFailed, deletedOnServer, missingOnServer
        case requestFailed
        case malformedServerResponse, cancelled
        // attachments
        case attachmentDigestMismatch
        // store
        case localStoreFailed
        // attachments
        case invalidAttachment, attachmentNotFound, attachmentContentUnavailable, attachmentDamaged, attachmentsUnsupported
        case attachmentTransferFailed
    }

    package let code: Code
    /// A short, value-free explanation of this occurrence (for logs and UIs).
    public let reason: String?
    /// The HTTP status of the response that caused the error, when there was one.
    public let statusCode: Int?
    /// The server's copy of the item, for conflicts (409, 412) and items deleted on the server.
    public let serverItem: JSONObject?
    /// For a push: the operations that failed, each with its resolution calls. Also attached to an
    /// aborted push, with the errors collected before the abort.
    public let operationErrors: [TableOperationError]
    /// For ``attachmentTransferFailed``: the transfers the server refused for good, each with its
    /// `lastError`; they stay in the queue, parked, and are not tried again.
    public let failedTransfers: [AttachmentTransferRecord]
    /// The error that caused this one (a transport or store error), if any.
    public let underlyingError: (any Error)?

    init(
        _ code: Code, reason: String? = nil, statusCode: Int? = nil, serverItem: JSONObject? = nil,
        operationErrors: [TableOperationError] = [], failedTransfers: [AttachmentTransferRecord] = [], underlying: (any Error)? = nil
    ) {
        self.code = code
        self.reason = reason
        self.statusCode = statusCode
        self.serverItem = serverItem
        self.operationErrors = operationErrors
        self.failedTransfers = failedTransfers
        self.underlyingError = underlying
    }

    /// The same error with other operation errors attached.
    func with(operationErrors: [TableOperationError]) -> SyncError {
        SyncError(
            code, reason: reason, statusCode: statusCode, serverItem: serverItem, operationErrors: operationErrors,
            failedTransfers: failedTransfers, underlying: underlyingError)
    }

    /// The same kind of error with a reason.
    func with(reason: String) -> SyncError {
        SyncError(
            code, reason: reason, statusCode: statusCode, serverItem: serverItem, operationErrors: operationErrors,
            failedTransfers: failedTransfers, underlying: underlyingError)
    }

    /// Whether the server refused a write because its copy of the item differs: changed (409 or
    /// 412, its item in ``serverItem``), deleted (``deletedOnServer``) or missing
    /// (``missingOnServer``).
    public var isConflict: Bool { conflict != nil }

    /// The kind of conflict this error is, if it is one.
    var conflict: TableOperationError.Conflict? {
        switch code {
        case .conflict, .preconditionFailed: return .changedOnServer
        case .deletedOnServer: return .deletedOnServer
        case .missingOnServer: return .missingOnServer
        default: return nil
        }
    }

    /// Whether this error ended a push before it walked the whole queue (network, authentication,
    /// local store or cancellation).
    public var isPushAbort: Bool {
        [.pushAbortedByNetwork, .pushAbortedByAuthentication, .pushAbortedByLocalStore, .pushCancelled].contains(code)
    }

    /// The local store's error behind this one, when the store failed (``localStoreFailed``, and
    /// ``pushAbortedByLocalStore`` around it): `StoreError/diskFull` (free space, then sync
    /// again), `StoreError/ioError`, `StoreError/corruptOrKeyMismatch`, … Compare by kind:
    /// `error.storeError == .diskFull`.
    public var storeError: StoreError? {
        var next = underlyingError
        while let error = next {
            if let store = error as? StoreError { return store }
            next = (error as? SyncError)?.underlyingError
        }
        return nil
    }

    /// The kind, the HTTP status and the reason; never item values. A push stopped by the local
    /// store adds the store's own sentence (a full disk: free space, then sync again).
    public var description: String {
        var text = kindName
        if let statusCode { text += " (HTTP \(statusCode))" }
        if let reason { text += ": \(reason)" }
        if code == .pushAbortedByLocalStore, let store = storeError, reason?.contains(store.description) != true {
            text += (reason == nil ? ": " : " ") + store.description
        }
        if !operationErrors.isEmpty { text += " [\(operationErrors.count) operation error(s)]" }
        return text
    }
}

extension SyncError: Equatable, Hashable, KindedError {
    /// Matches any error against a `SyncError` kind, so that `catch SyncError.pushCancelled` works.
    public static func ~= (pattern: SyncError, value: any Error) -> Bool { pattern.matches(value) }
}

extension SyncError {
    // MARK: local validation

    /// The service URL cannot be used to build request URLs.
    public static let invalidURL = SyncError(.invalidURL)
    /// The table name is not a valid user table name.
    public static let invalidTableName = SyncError(.invalidTableName)
    /// The item cannot be stored: not a JSON object, or it lacks what the call needs.
    public static let invalidItem = SyncError(.invalidItem)
    /// The item id is not a valid string id (docs/protocol.md §2.6), or not a string at all.
    public static let invalidItemID = SyncError(.invalidItemID)
    /// The write conflicts with the pending operation of the same item (the collapse rules of
    /// docs/protocol.md §1.3: nothing may follow a delete, and an insert may not follow anything).
    public static let operationNotAllowed = SyncError(.operationNotAllowed)
    /// An insert of an id that already exists in the local table.
    public static let itemAlreadyExists = SyncError(.itemAlreadyExists)
    /// An update or delete of an id that is not in the local table, with no `version` in the
    /// item: it would change the server's item without knowing which version it changes
    /// (pull the item first, or insert it).
    public static let itemNotFound = SyncError(.itemNotFound)
    /// The local store cannot evaluate the query (unknown column, unsupported expression).
    public static let invalidQuery = SyncError(.invalidQuery)
    /// The query id is empty, longer than 255 characters, or contains `|` or control characters.
    public static let invalidQueryID = SyncError(.invalidQueryID)
    /// The pull query is not allowed (selection, total count, `__includeDeleted`, `$` parameters;
    /// with a query id also ordering, top or skip), or it names another table.
    public static let invalidPullQuery = SyncError(.invalidPullQuery)
    /// A force purge was asked with a filter while the table has pending operations.
    public static let invalidPurgeQuery = SyncError(.invalidPurgeQuery)
    /// A setting of the context is out of its range (``SyncContext/setPushParallelism(_:)``).
    public static let invalidSetting = SyncError(.invalidSetting)

    // MARK: push

    /// The push walked the queue, but some operations failed; see ``operationErrors``.
    public static let pushCompletedWithErrors = SyncError(.pushCompletedWithErrors)
    /// The push stopped because the server could not be reached; the operation stays queued.
    public static let pushAbortedByNetwork = SyncError(.pushAbortedByNetwork)
    /// The push stopped because the server answered 401; the operation stays queued.
    public static let pushAbortedByAuthentication = SyncError(.pushAbortedByAuthentication)
    /// The push stopped because the local store failed; the operation stays queued.
    public static let pushAbortedByLocalStore = SyncError(.pushAbortedByLocalStore)
    /// The push was cancelled (task cancellation, also while it waited for its turn,
    /// ``SyncContext/cancel()`` or ``PushOperation/cancelPush()``); the current operation stays
    /// queued.
    public static let pushCancelled = SyncError(.pushCancelled)

    // MARK: pull and purge

    /// The pull was cancelled (task cancellation, also while it waited for its turn, or
    /// ``SyncContext/cancel()``); pages already applied stay applied.
    public static let pullCancelled = SyncError(.pullCancelled)
    /// The table has pending operations, so a purge would lose them; push first or force.
    public static let purgeBlockedByPendingOperations = SyncError(.purgeBlockedByPendingOperations)
    /// The purge's task was cancelled while it waited for a running push or pull; nothing was
    /// deleted.
    public static let purgeCancelled = SyncError(.purgeCancelled)
    /// The pull met two server items whose ids differ only in ASCII case (`dup` and `DUP`, on a
    /// backend that compares ids exactly): the client holds one item per folded id, so it kept
    /// the one it had and left the other alone; the rest of the pull was applied. The clashes are
    /// in ``itemIDCaseClashes`` and ``SyncContext/itemIDCaseClashes()``.
    public static let itemIDCaseClash = SyncError(.itemIDCaseClash)

    // MARK: resolution

    /// The operation of an operation error no longer exists (it was pushed, cancelled or purged).
    public static let operationNotFound = SyncError(.operationNotFound)
    /// The operation changed after the error was recorded (a newer local write); push again.
    public static let operationChanged = SyncError(.operationChanged)
    /// The resolution would send the server the request it refused, unchanged (the same kind,
    /// item and version: it could only be refused again, and again); nothing was changed. Choose
    /// another resolution (the server's copy, a changed item, or cancel).
    public static let resolutionWouldRepeat = SyncError(.resolutionWouldRepeat)

    // MARK: requests

    /// The transport failed (no network, timeout, DNS, TLS).
    public static let transportFailed = SyncError(.transportFailed)
    /// The server answered 401 Unauthorized.
    public static let authenticationRequired = SyncError(.authenticationRequired)
    /// The server answered 409 Conflict; ``serverItem`` holds its copy when it sent one.
    public static let conflict = SyncError(.conflict)
    /// The server answered 412 Precondition Failed (version mismatch); ``serverItem`` holds its copy.
    public static let preconditionFailed = SyncError(.preconditionFailed)
    /// The server has the item deleted: an update answered 2xx with `deleted: true`, or a
    /// refusal (409, 412, 404, 410) whose copy is deleted. ``statusCode`` is the status received;
    /// ``serverItem`` holds the deleted copy when the server sent one.
    public static let deletedOnServer = SyncError(.deletedOnServer)
    /// The server does not have the item: a refusal (409, 412; 404 or 410 for an update) whose
    /// item cannot be read by id. ``statusCode`` is the status received.
    public static let missingOnServer = SyncError(.missingOnServer)
    /// The server answered another error status; see ``statusCode``.
    public static let requestFailed = SyncError(.requestFailed)
    /// The server's answer is not the JSON the protocol describes.
    public static let malformedServerResponse = SyncError(.malformedServerResponse)
    /// The request was cancelled.
    public static let cancelled = SyncError(.cancelled)
    /// An attachment's content does not hash to the SHA-256 its metadata names: the server
    /// discarded an upload (422), or a download's bytes are not the server's (the sink was not
    /// finished).
    public static let attachmentDigestMismatch = SyncError(.attachmentDigestMismatch)

    // MARK: store

    /// The local store failed; ``underlyingError`` holds the store's error.
    public static let localStoreFailed = SyncError(.localStoreFailed)

    // MARK: attachments

    /// An attachment was refused before anything was written: an invalid name or content type,
    /// no such item, a file that cannot be read, or an export target that exists.
    public static let invalidAttachment = SyncError(.invalidAttachment)
    /// The table has no attachment with this id locally.
    public static let attachmentNotFound = SyncError(.attachmentNotFound)
    /// The attachment's metadata is here but its content is not (pulled, not downloaded yet).
    public static let attachmentContentUnavailable = SyncError(.attachmentContentUnavailable)
    /// The attachment's file is damaged or was modified: a segment fails its tag, the file was
    /// truncated or its segments reordered (``underlyingError`` holds the `AttachmentFileError`).
    public static let attachmentDamaged = SyncError(.attachmentDamaged)
    /// The context's store keeps no attachments (only `SQLiteStore` does).
    public static let attachmentsUnsupported = SyncError(.attachmentsUnsupported)
    /// The server refused attachment transfers for good (the item or attachment is gone: 404; the
    /// content is too large: 413; its SHA-256 does not match: 422); see ``failedTransfers``.
    /// They are parked in the queue and not tried again.
    public static let attachmentTransferFailed = SyncError(.attachmentTransferFailed)
}
