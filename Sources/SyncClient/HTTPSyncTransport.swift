public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The real transport: HTTP over `URLSession` on Apple platforms, over a small HTTP/1.1 client on
/// SwiftNIO on Linux.
///
/// Why not AsyncHTTPClient: the client SDK stays small (AsyncHTTPClient pulls in
/// swift-nio-extras, swift-nio-http2 and more; the client already links OpenSSL through
/// SQLCipher). Why not URLSession on Linux: FoundationNetworking's task cancellation can stop the
/// process or deadlock, and requests are cancelled at any moment (a cancelled pull or push, live
/// sync's stop). On Linux a whole request (``send(_:)``) goes over a kept-alive connection of the
/// transport's own pool (copies of a transport share it; its idle connections are closed a few
/// seconds after their last use, or when the last copy goes away), a streamed one
/// (``openStream(_:)``) over a connection of its own (`Connection: close`); the `session` is not
/// used there.
///
/// Every HTTP answer, error statuses included, comes back as a ``SyncResponse``; the call throws
/// only when no answer arrived. Task cancellation cancels the request.
public struct HTTPSyncTransport: SyncTransport {
    private let session: URLSession
    let timeout: TimeInterval
    #if os(Linux)
    private let client: NIOHTTPClient
    #endif

    /// Creates a transport.
    /// - Parameters:
    ///   - session: the session to send with on Apple platforms (default: an ephemeral session,
    ///     no cookies, no cache); not used on Linux.
    ///   - timeout: the request timeout in seconds.
    public init(session: URLSession? = nil, timeout: TimeInterval = 60) {
        self.session = session ?? URLSession(configuration: Self.defaultConfiguration())
        self.timeout = timeout
        #if os(Linux)
        client = NIOHTTPClient()
        #endif
    }

    #if os(Linux)
    /// Creates a transport whose whole requests go through `client` (and its pool's limits).
    init(timeout: TimeInterval = 60, client: NIOHTTPClient) {
        session = URLSession(configuration: Self.defaultConfiguration())
        self.timeout = timeout
        self.client = client
    }
    #endif

    private static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        return configuration
    }

    /// Builds the `URLRequest` for a ``SyncRequest``.
    func urlRequest(for request: SyncRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    /// Sends the request and returns the answer, whatever its status. It carries the request's
    /// method, URL, headers and body (with its `Content-Length`), as `urlRequest(for:)` builds
    /// them, and may stay idle up to the transport's timeout between two reads. On Linux the
    /// request's head is made straight from `request`, without a `URLRequest`.
    /// - Parameter request: the request.
    /// - Returns: the status, the headers and the whole body.
    /// - Throws: the `URLError` when no answer arrived (or `CancellationError`).
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        try Task.checkCancellation()
        #if os(Linux)
        return try await client.send(request, timeout: timeout)
        #else
        let (data, response) = try await session.data(for: urlRequest(for: request))
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String else { continue }
            headers[name] = value as? String ?? String(describing: value)
        }
        return SyncResponse(statusCode: http.statusCode, headers: headers, body: data)
        #endif
    }

    /// The executor a run of requests to `url`'s server may prefer (`withTaskExecutorPreference`):
    /// on Linux, the event loop of an idle connection to it, or the loop a new connection made from
    /// the run would use. Requests sent one after another from a task that prefers it are written,
    /// and their answers read, on the thread that resumes the task: no other thread is woken in
    /// between. Pushes and pulls use it; so can an app's own run of requests.
    /// - Parameter url: a URL of the server.
    /// - Returns: the executor, or nil when `url` is not an `http` or `https` URL with a host, and
    ///   on other systems (URLSession's requests have no such executor).
    public func executor(for url: URL) -> (any TaskExecutor)? {
        #if os(Linux)
        client.executor(for: url)
        #else
        nil
        #endif
    }

    #if os(Linux)
    /// How many kept-alive connections wait idle for the next request.
    var idleConnectionCount: Int { client.pool.count }

    /// Closes the kept-alive connections no request is using, and returns once they are closed.
    func closeIdleConnections() async {
        await client.closeIdleConnections()
    }
    #endif
}
