#if !os(Linux)
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
#endif
