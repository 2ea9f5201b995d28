import Foundation
public import Hummingbird
import SyncWire

/// The storage cannot serve a request now, and nothing of the request was applied: answered
/// 503 with `{"error": …}` and `Retry-After` (docs/deploy.md, "Storage outages").
///
/// A storage throws it only when it knows the request changed nothing: no connection could be
/// had within ``ServerConfiguration/storageTimeout`` (PostgreSQL) or the database stayed locked
/// that long (SQLite), or the connection was lost before a write's commit was sent.
public struct StorageUnavailableError: Error, Sendable, Hashable, CustomStringConvertible, HTTPResponseError {
    /// Why the storage could not serve the request: a set of static values that may grow, compared
    /// with `==` (`error.reason == .busy`).
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        enum Code: String, Sendable, Hashable {
            case noConnection = "no_connection", unreachable, busy
        }

        let code: Code

        /// No storage connection came free within the timeout (the database is down or the pool
        /// is exhausted).
        public static let noConnection = Reason(code: .noConnection)
        /// The database could not be reached, or the connection was lost before anything was
        /// committed.
        public static let unreachable = Reason(code: .unreachable)
        /// The database stayed locked by another process for the whole timeout (SQLite).
        public static let busy = Reason(code: .busy)

        /// The reason's name, as the storage-error metric labels it (`no_connection`, `unreachable`,
        /// `busy`).
        public var description: String { code.rawValue }
    }

    /// Why.
    public let reason: Reason
    /// How long the server waited, which is also how long the client is asked to wait.
    public let timeout: Duration

    /// An error.
    ///
    /// - Parameters:
    ///   - reason: Why the storage could not serve the request.
    ///   - timeout: The server's storage timeout.
    public init(_ reason: Reason, timeout: Duration) {
        self.reason = reason
        self.timeout = timeout
    }

    /// What happened, for logs and the answer's message (nothing about any row).
    public var description: String {
        let waited = String(format: "%g", Self.seconds(timeout))
        switch reason.code {
        case .noConnection:
            return "The storage is unavailable: no database connection within \(waited) s; the request was not applied"
        case .unreachable:
            return "The storage is unavailable: the database cannot be reached; the request was not applied"
        case .busy:
            return "The storage is unavailable: the database stayed locked for \(waited) s; the request was not applied"
        }
    }

    /// 503.
    public var status: HTTPResponse.Status { .serviceUnavailable }

    /// The answer: 503, `{"error": description}`, `Retry-After` in whole seconds (at least 1).
    ///
    /// - Parameters:
    ///   - request: The request (unused).
    ///   - context: Its context (unused).
    /// - Returns: The response.
    /// - Throws: An encoding error (not expected).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponse.make(["error": JSONValue.string(description)] as JSONObject, status: status, headers: retryAfter)
    }

    /// `Retry-After: N`, N the timeout in whole seconds rounded up, at least 1.
    var retryAfter: HTTPFields {
        [.retryAfter: String(max(1, Int(Self.seconds(timeout).rounded(.up))))]
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A write whose commit was sent when the connection to the database was lost: it may or may not
/// have been applied, so it is not answered 503 (which promises it was not) but 500 saying so.
public struct StorageOutcomeUnknownError: Error, Sendable, CustomStringConvertible, HTTPResponseError {
    /// The error.
    public init() {}

    /// What happened.
    public var description: String {
        "The connection to the database was lost while the write committed: it may have been applied; read the item before writing it again"
    }

    /// 500.
    public var status: HTTPResponse.Status { .internalServerError }

    /// The answer: 500, `{"error": description}`.
    ///
    /// - Parameters:
    ///   - request: The request (unused).
    ///   - context: Its context (unused).
    /// - Returns: The response.
    /// - Throws: An encoding error (not expected).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponse.make(["error": JSONValue.string(description)] as JSONObject, status: status)
    }
}
