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

    /// The exchange's state machine, with the continuations and channel it holds.
    typealias Machine = HTTPExchangeStateMachine<
        CheckedContinuation<SyncStreamResponse, any Error>, CheckedContinuation<SyncResponse, any Error>, any Channel,
        CheckedContinuation<Void, Never>
    >

    private let state: Mutex<Machine>

    /// Creates an exchange.
    /// - Parameters:
    ///   - reused: whether it runs on a kept-alive connection.
    ///   - repeatable: whether its request may be sent again.
    init(reused: Bool = false, repeatable: Bool = false) {
        state = Mutex(Machine(reused: reused, repeatable: repeatable))
    }

    /// Records who waits, before anything can resume it.
    func start(_ waiter: Waiter) {
        switch waiter {
        case .stream(let head):
            let (stream, source) = AsyncThrowingStream<Data, any Error>.makeStream()
            // The consumer ended or dropped the body, or its task was cancelled: should the end
            // reach it still (the termination handler runs before the stream ends), it is a
            // cancellation.
            source.onTermination = { [weak self] _ in self?.close(because: CancellationError()) }
            state.withLock { $0.started(streaming: head, stream: stream, source: source) }
        case .whole(let answer):
            state.withLock { $0.started(whole: answer) }
        }
    }

    /// Keeps `channel` to close; false when the exchange is already closing.
    func attach(_ channel: any Channel) -> Bool {
        state.withLock { $0.attached(channel) }
    }

    /// Closes the connection (once, whoever asks): the consumer ended the body, the caller was
    /// cancelled, the response ended, or the channel met `reason`.
    func close(because reason: (any Error)?) {
        let channel = state.withLock { $0.closeRequested(because: reason) }
        channel?.close(promise: nil)
    }

    /// The response's head arrived: a streamed response's caller gets it with the body's stream
    /// (unless the exchange is closing: then the caller hears why once the channel is closed); a
    /// whole response starts.
    func received(status: Int, headers: [String: String]) {
        guard let (head, stream) = state.withLock({ $0.headReceived(status: status, headers: headers) }) else { return }
        head.resume(
            returning: SyncStreamResponse(statusCode: status, headers: headers, body: stream) { [self] in await self.finished() })
    }

    /// A piece of the body arrived.
    func received(_ piece: Data) {
        state.withLock { $0.bodyReceived(piece) }?.yield(piece)
    }

    /// The response ended: a streamed body finishes, a whole response is complete; the
    /// connection closes.
    func ended() {
        state.withLock { $0.responseEnded() }?.finish()
        close(because: nil)
    }

    /// The whole request was written.
    func wrote() {
        state.withLock { $0.requestWritten() }
    }

    /// A whole response was read to its end on a connection that may stay open: unless the
    /// exchange is closing, it lets go of the channel and hands back what resumes its caller.
    /// - Returns: what hands the response to the caller, or nil when the exchange is closing
    ///   or is not a whole response (then the channel is closed as usual).
    func handOver() -> (@Sendable () -> Void)? {
        guard let (answer, response) = state.withLock({ $0.handOver() }) else { return nil }
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
            if state.withLock({ $0.awaitFinish(continuation) }) { continuation.resume() }
        }
    }

    private func finish(_ fallback: any Error) {
        // The stream leaves the lock with the rest: the last reference to it ends it, and its
        // termination handler takes the lock.
        let finish = state.withLock { $0.finished(fallback: fallback) }
        for finishWaiter in finish.finishWaiters { finishWaiter.resume() }
        switch finish.resumption {
        case .streamFailed(let head, let reason)?:
            head.resume(throwing: reason)
        case .whole(let answer, let result)?:
            answer.resume(with: result)
        case nil:
            break
        }
        finish.body?.finish(throwing: finish.reason)
    }
}
#endif
