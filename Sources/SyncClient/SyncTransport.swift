public import Foundation
import SyncWire

/// One HTTP request of the tables protocol, fully built: method, absolute URL, headers, body.
public struct SyncRequest: Sendable, Hashable {
    /// The HTTP methods the protocol uses.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        case get = "GET", post = "POST", patch = "PATCH", delete = "DELETE"
        /// An attachment's upload progress (`HEAD` of its content route).
        case head = "HEAD"
    }

    /// The HTTP method.
    public var method: Method
    /// The absolute URL, query included.
    public var url: URL
    /// The request headers (names as sent; look them up with ``header(_:)``).
    public var headers: [String: String]
    /// The body, for inserts and updates.
    public var body: Data?

    /// Creates a request.
    public init(method: Method, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { CaseInsensitive.equal($0.key, name) }?.value
    }

    /// The decoded query items of the URL (`$filter`, `$top`, …), in order.
    public var queryItems: [URLQueryItem] {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    }

    /// The decoded value of one query item, or `nil`.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}

extension SyncRequest: CustomStringConvertible, CustomDebugStringConvertible {
    /// The method and URL only: headers carry the authentication token and bodies carry items,
    /// so neither reaches a log or a test failure message this way.
    public var description: String { "\(method.rawValue) \(url.absoluteString)" }
    /// The same as `description`: the method and URL only.
    public var debugDescription: String { description }
}

/// The server's answer to a ``SyncRequest``.
public struct SyncResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body (may be empty).
    public var body: Data

    /// Creates a response.
    public init(statusCode: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// The value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { CaseInsensitive.equal($0.key, name) }?.value
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }
}

/// Sends requests to the server: the seam between the sync engine and the network.
///
/// ``HTTPSyncTransport`` is the real one; tests use a scripted fake. A transport returns every
/// HTTP answer, error statuses included, as a ``SyncResponse``; it **throws** only when no answer
/// arrived (no network, timeout, cancellation), and the engine treats that as a network failure
/// (a push aborts and keeps the operation queued).
public protocol SyncTransport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status.
    /// - Throws: when no answer arrived.
    func send(_ request: SyncRequest) async throws -> SyncResponse
}
