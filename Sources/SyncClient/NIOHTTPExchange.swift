#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
import Synchronization

/// One exchange of ``NIOHTTPClient``: who waits for it (the head of a streamed response, or a
/// whole response), the streamed body or the body collected so far, and the channel, shared by
/// the channel's handler, the caller's cancellation and a streamed body's consumer.
///
/// Closing is one step whoever asks first: the channel is closed once (or refused when it is
/// attached later). The caller and the consumer hear of the end only when it has happened — when
/// the channel is inactive or the connection attempt failed — so nothing is left open behind a
/// thrown error. A whole response read to its end on a connection that may stay open is handed
/// over instead (``handOver()``): from then on the exchange no longer closes the channel, which
/// goes back to its pool.
final class HTTPExchange: Sendable {
    /// The exchange ran on a kept-alive connection that the server had closed, and its request
    /// may be sent again on a new one: nothing of the response arrived, and the request was not
    /// written or is repeatable. ``NIOHTTPClient/send(_:)`` catches it; it never reaches a caller.
    struct StaleConnection: Error {}

    /// Who waits, and for what.
    enum Waiter: Sendable {
        /// The response's head, with the body's stream.
        case stream(CheckedContinuation<SyncStreamResponse, any Error>)
        /// The whole response, once its connection is closed or handed over.
        case whole(CheckedContinuation<SyncResponse, any Error>)
    }

    private struct State {
        var waiter: Waiter?
        /// A streamed response's body: the stream handed over with the head, and its source.
        var stream: AsyncThrowingStream<Data, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
        /// A whole response as it arrives; `complete` once its end was read.
        var response: SyncResponse?
        var complete = false
        var channel: (any Channel)?
        /// Set by the first request to close; later channels are refused.
        var closing = false
        /// Why the exchange ends, when it ends by an error; the first reason wins.
        var reason: (any Error)?
        /// Whether the response's head arrived; whether the whole request was written.
        var answered = false
        var written = false
        /// Whether the exchange has ended (its connection closed, or never made), and who waits
        /// for that.
        var finished = false
        var finishWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// Whether the connection was kept alive from an earlier exchange.
    private let reused: Bool
    /// Whether the request may be sent twice (GET, HEAD).
    private let repeatable: Bool

    /// Creates an exchange.
    /// - Parameters:
    ///   - reused: whether it runs on a kept-alive connection.
    ///   - repeatable: whether its request may be sent again.
    init(reused: Bool = false, repeatable: Bool = false) {
        self.reused = reused
        self.repeatable = repeatable
    }

    /// Records who waits, before anything can resume it.
    func start(_ waiter: Waiter) {
        var stream: AsyncThrowingStream<Data, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
        if case .stream = waiter {
            let (made, source) = AsyncThrowingStream<Data, any Error>.makeStream()
            // The consumer ended or dropped the body, or its task was cancelled: should the end
            // reach it still (the termination handler runs before the stream ends), it is a
            // cancellation.
            source.onTermination = { [weak self] _ in self?.close(because: CancellationError()) }
            (stream, body) = (made, source)
        }
        state.withLock { state in
            state.waiter = waiter
            (state.stream, state.body) = (stream, body)
        }
    }

    /// Keeps `channel` to close; false when the exchange is already closing.
    func attach(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.closing else { return false }
            state.channel = channel
            return true
        }
    }

    /// Closes the connection (once, whoever asks): the consumer ended the body, the caller was
    /// cancelled, the response ended, or the channel met `reason`.
    func close(because reason: (any Error)?) {
        let channel = state.withLock { state -> (any Channel)? in
            if state.reason == nil { state.reason = reason }
            guard !state.closing else { return nil }
            state.closing = true
            return state.channel
        }
        channel?.close(promise: nil)
    }

    /// The response's head arrived: a streamed response's caller gets it with the body's stream
    /// (unless the exchange is closing: then the caller hears why once the channel is closed); a
    /// whole response starts.
    func received(status: Int, headers: [String: String]) {
        let (waiter, stream) = state.withLock { state -> (Waiter?, AsyncThrowingStream<Data, any Error>?) in
            state.answered = true
            guard !state.closing, let waiter = state.waiter else { return (nil, nil) }
            guard case .stream = waiter else {
                state.response = SyncResponse(statusCode: status, headers: headers)
                return (nil, nil)
            }
            defer { (state.waiter, state.stream) = (nil, nil) }
            return (waiter, state.stream)
        }
        guard case .stream(let head)? = waiter, let stream else { return }
        head.resume(
            returning: SyncStreamResponse(statusCode: status, headers: headers, body: stream) { [self] in await self.finished() })
    }

    /// A piece of the body arrived.
    func received(_ piece: Data) {
        let body = state.withLock { state -> AsyncThrowingStream<Data, any Error>.Continuation? in
            state.response?.body.append(piece)
            return state.body
        }
        body?.yield(piece)
    }

    /// The response ended: a streamed body finishes, a whole response is complete; the
    /// connection closes.
    func ended() {
        let body = state.withLock { state -> AsyncThrowingStream<Data, any Error>.Continuation? in
            state.complete = state.response != nil
            return state.body
        }
        body?.finish()
        close(because: nil)
    }

    /// The whole request was written.
    func wrote() {
        state.withLock { $0.written = true }
    }

    /// A whole response was read to its end on a connection that may stay open: unless the
    /// exchange is closing, it lets go of the channel and hands back what resumes its caller.
    /// - Returns: what hands the response to the caller, or nil when the exchange is closing
    ///   or is not a whole response (then the channel is closed as usual).
    func handOver() -> (@Sendable () -> Void)? {
        let taken = state.withLock { state -> (CheckedContinuation<SyncResponse, any Error>, SyncResponse)? in
            guard !state.closing, case .whole(let answer)? = state.waiter, let response = state.response else { return nil }
            state.closing = true
            state.channel = nil
            (state.waiter, state.response) = (nil, nil)
            return (answer, response)
        }
        guard let (answer, response) = taken else { return nil }
        return { answer.resume(returning: response) }
    }

    /// The channel is closed: a whole response that is complete goes to its caller; a caller
    /// still waiting otherwise, or a body not finished, ends with the reason (the connection was
    /// lost when there is none).
    func closed() {
        finish(URLError(.networkConnectionLost))
    }

    /// No connection was made.
    func connectFailed(_ error: any Error) {
        finish(NIOHTTPClient.urlError(for: error))
    }

    /// Returns once the exchange has ended: its connection is closed (or was never made).
    func finished() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.finished { return true }
                state.finishWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func finish(_ fallback: any Error) {
        // The stream leaves the lock with the rest: the last reference to it ends it, and its
        // termination handler takes the lock.
        let (waiter, _, body, response, reason, finishWaiters) = state.withLock { state in
            state.closing = true
            state.channel = nil
            state.finished = true
            defer {
                (state.waiter, state.stream, state.body, state.response) = (nil, nil, nil, nil)
                state.finishWaiters = []
            }
            let lost = state.reason.map { ($0 as? URLError)?.code == .networkConnectionLost } ?? true
            let stale = reused && lost && !state.answered && (!state.written || repeatable)
            let reason = stale ? StaleConnection() : state.reason ?? fallback
            return (state.waiter, state.stream, state.body, state.complete ? state.response : nil, reason, state.finishWaiters)
        }
        for finishWaiter in finishWaiters { finishWaiter.resume() }
        switch waiter {
        case .stream(let head)?:
            head.resume(throwing: reason)
        case .whole(let answer)?:
            if let response { answer.resume(returning: response) } else { answer.resume(throwing: reason) }
        case nil:
            break
        }
        body?.finish(throwing: reason)
    }
}
#endif
