/// The errors the engine raises in more than one place, each with its one reason.
extension SyncError {
    /// A push cancelled (task cancellation, ``SyncContext/cancel()``, ``PushOperation/cancelPush()``).
    ///
    /// - Parameter cause: The error that reported the cancellation, if any.
    static func pushWasCancelled(_ cause: (any Error)? = nil) -> SyncError {
        SyncError(.pushCancelled, reason: "The push was cancelled.", underlying: cause)
    }

    /// A pull cancelled (task cancellation, ``SyncContext/cancel()``).
    ///
    /// - Parameter cause: The error that reported the cancellation, if any.
    static func pullWasCancelled(_ cause: (any Error)? = nil) -> SyncError {
        SyncError(.pullCancelled, reason: "The pull was cancelled.", underlying: cause)
    }

    /// A table name that is not a valid table name.
    ///
    /// - Parameter cause: The store's refusal, if the store found it.
    static func notATableName(_ cause: (any Error)? = nil) -> SyncError {
        SyncError(.invalidTableName, reason: "Not a valid table name.", underlying: cause)
    }

    /// A write of an item whose pending operation is a delete.
    static let pendingDelete = SyncError(.operationNotAllowed, reason: "The item has a pending delete.")

    /// The service URL has no components to build request URLs from.
    static let unparsableServiceURL = SyncError(.invalidURL, reason: "The service URL cannot be parsed.")

    /// The components of a request do not make a URL.
    static let unbuildableRequestURL = SyncError(.invalidURL, reason: "The request URL cannot be built.")

    /// The transport failed before an answer arrived.
    ///
    /// - Parameter cause: The transport's error.
    static func noAnswer(_ cause: any Error) -> SyncError {
        SyncError(.transportFailed, reason: "No answer from the server.", underlying: cause)
    }

    /// An update or delete of an item the local table does not have, without a version.
    static let notInLocalTable = SyncError(
        .itemNotFound,
        reason:
            "The item is not in the local table and has no version: pull it first (or insert it), so that the change goes over a version the server can check."
    )

    /// A push that the server answered 401.
    static let pushRefusedSignIn = SyncError(.pushAbortedByAuthentication, reason: "The server asked for authentication.", statusCode: 401)

    /// An answer whose body is not the JSON object the protocol describes.
    ///
    /// - Parameter statusCode: The answer's status.
    static func notAJSONObject(statusCode: Int) -> SyncError {
        SyncError(.malformedServerResponse, reason: "The server's answer is not a JSON object.", statusCode: statusCode)
    }
}
