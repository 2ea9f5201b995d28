public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose body arrives piece by piece (a stream of server-sent events).
public struct SyncStreamResponse: Sendable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body as it arrives; it ends when the server closes the response, and throws when
    /// the connection fails. Ending the iteration closes the connection.
    public var body: AsyncThrowingStream<Data, any Error>
    /// Returns once the response's connection is closed (after the body ended, or its iteration
    /// did): a caller that stops listening can wait for it, so that nothing it opened outlives it.
    public var closed: @Sendable () async -> Void

    /// Creates a streamed response.
    /// - Parameters:
    ///   - statusCode: the HTTP status code.
    ///   - headers: the response headers.
    ///   - body: the body's pieces.
    ///   - closed: returns once the connection is closed (by default at once).
    public init(
        statusCode: Int, headers: [String: String], body: AsyncThrowingStream<Data, any Error>,
        closed: @escaping @Sendable () async -> Void = {}
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.closed = closed
    }
}

/// A transport that can also keep a response open and hand its body over as it arrives: what
/// live sync (``SyncContext/startLiveSync(_:options:)``) listens to change notifications with.
/// A transport that is not one makes live sync pull at an interval instead.
public protocol SyncStreamingTransport: SyncTransport {
    /// Sends `request` and returns once the response's head has arrived.
    /// - Parameter request: the request (a `GET`).
    /// - Returns: the status, the headers and the body as it arrives.
    /// - Throws: when no answer arrived.
    func openStream(_ request: SyncRequest) async throws -> SyncStreamResponse
}

extension HTTPSyncTransport: SyncStreamingTransport {
    /// Sends `request` and hands each piece of the body on as it arrives. On Linux it goes over
    /// a connection of its own on SwiftNIO (HTTP/1.1, TLS for `https`) rather than URLSession,
    /// so that cancelling it at any moment is safe; elsewhere over a URLSession whose delegate
    /// yields the pieces. Either way it carries what `urlRequest(for:)` builds, and the
    /// request may stay idle up to the transport's timeout between two pieces. Cancelling the
    /// calling task, or ending the body's iteration, closes the connection.
    /// - Parameter request: the request.
    /// - Returns: the response head and its body stream.
    /// - Throws: the `URLError` when no answer arrived (or `CancellationError`).
    public func openStream(_ request: SyncRequest) async throws -> SyncStreamResponse {
        try Task.checkCancellation()
        #if os(Linux)
        return try await NIOHTTPClient.open(request, timeout: timeout)
        #else
        return try await StreamingSession.shared.open(urlRequest(for: request))
        #endif
    }
}
