public import Foundation
import Synchronization

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

    /// Creates a streamed response.
    /// - Parameters:
    ///   - statusCode: the HTTP status code.
    ///   - headers: the response headers.
    ///   - body: the body's pieces.
    public init(statusCode: Int, headers: [String: String], body: AsyncThrowingStream<Data, any Error>) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
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
    /// Sends `request` over a session of its own whose delegate hands each piece of the body on
    /// as it arrives (FoundationNetworking has no `bytes(for:)`). The request may stay idle up to
    /// the transport's timeout between two pieces.
    /// - Parameter request: the request.
    /// - Returns: the response head and its body stream.
    /// - Throws: the `URLError` when no answer arrived (or `CancellationError`).
    public func openStream(_ request: SyncRequest) async throws -> SyncStreamResponse {
        try Task.checkCancellation()
        return try await StreamingSession.shared.open(urlRequest(for: request))
    }
}

/// One URLSession with a delegate, shared by every streamed request of the process: each task's
/// head resumes its caller, each piece of its body is yielded to its stream.
final class StreamingSession: NSObject, URLSessionDataDelegate, Sendable {
    static let shared = StreamingSession()

    private struct Pending {
        var head: CheckedContinuation<SyncStreamResponse, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation
        var stream: AsyncThrowingStream<Data, any Error>
    }

    private let tasks = Mutex<[Int: Pending]>([:])
    private let session = Mutex<URLSession?>(nil)

    private func urlSession() -> URLSession {
        session.withLock { session in
            if let session { return session }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.httpShouldSetCookies = false
            let made = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
            session = made
            return made
        }
    }

    func open(_ request: URLRequest) async throws -> SyncStreamResponse {
        let task = urlSession().dataTask(with: request)
        let id = task.taskIdentifier
        let (stream, body) = AsyncThrowingStream<Data, any Error>.makeStream()
        body.onTermination = { [weak self] _ in self?.cancel(task) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                tasks.withLock { $0[id] = Pending(head: head, body: body, stream: stream) }
                task.resume()
            }
        } onCancel: {
            cancel(task)
        }
    }

    /// Cancels a task that has not completed (FoundationNetworking stops the process when a
    /// completed task is cancelled: its registry no longer knows it).
    private func cancel(_ task: URLSessionDataTask) {
        tasks.withLock { tasks in
            guard tasks[task.taskIdentifier] != nil, task.state == .running || task.state == .suspended else { return }
            task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        let pending = tasks.withLock { tasks -> Pending? in
            let pending = tasks[id]
            tasks[id]?.head = nil
            return pending
        }
        guard let pending, let head = pending.head else {
            completionHandler(.cancel)
            return
        }
        guard let http = response as? HTTPURLResponse else {
            head.resume(throwing: URLError(.badServerResponse))
            completionHandler(.cancel)
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String else { continue }
            headers[name] = value as? String ?? String(describing: value)
        }
        completionHandler(.allow)
        head.resume(returning: SyncStreamResponse(statusCode: http.statusCode, headers: headers, body: pending.stream))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = tasks.withLock { $0[dataTask.taskIdentifier]?.body }
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let pending = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let head = pending.head {
            head.resume(throwing: error ?? URLError(.badServerResponse))
        }
        pending.body.finish(throwing: error)
    }
}
