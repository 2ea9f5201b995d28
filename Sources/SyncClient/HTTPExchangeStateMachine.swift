#if os(Linux)
import Foundation
import FoundationNetworking
import SyncWire

/// The state of one HTTP exchange (``HTTPExchange``) as a value: each event the channel, the
/// caller or a streamed body's consumer reports returns what to do, and the exchange does it
/// outside its lock. No I/O happens here, so the rules are tested without a connection.
///
/// The continuations and the channel are type parameters: the exchange uses checked
/// continuations and a NIO channel, a test plain values.
struct HTTPExchangeStateMachine<Head, Whole, Channel, FinishWaiter> {
    /// Who waits for the response, and how far its reading is.
    enum Reader {
        /// A streamed response's caller waits for the head: the stream it is handed, and the
        /// stream's source.
        case awaitingHead(Head, AsyncThrowingStream<Data, any Error>, AsyncThrowingStream<Data, any Error>.Continuation)
        /// A streamed response's body is being read by its consumer.
        case streaming(AsyncThrowingStream<Data, any Error>.Continuation)
        /// A whole response's caller waits; the response as it arrives (from its head on).
        case collecting(Whole, SyncResponse?)
        /// A whole response was read to its end, its caller not resumed yet.
        case complete(Whole, SyncResponse)
        /// Nobody waits any more.
        case done
    }

    /// The connection of the exchange.
    enum Connection {
        /// Not attached yet (being made, or reused and not attached).
        case pending
        /// Attached: closed by the first request to close.
        case attached(Channel)
        /// A close was asked for (or the channel was handed back to its pool): a channel attached
        /// from now on is refused.
        case closing
        /// The exchange ended: its connection closed, or never made.
        case finished
    }

    /// How far the request got, for the stale-connection rule.
    enum Progress: Comparable {
        /// Neither fully written nor answered.
        case sending
        /// The whole request was written.
        case written
        /// The response's head arrived (whether or not the request was written to its end).
        case answered
    }

    /// What to do once the exchange has finished.
    struct Finish {
        /// The caller to resume, and with what.
        enum Resumption {
            case streamFailed(Head, any Error)
            case whole(Whole, Result<SyncResponse, any Error>)
        }

        var resumption: Resumption?
        /// A streamed body to end with `reason`.
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
        /// The stream not handed over: dropped outside the lock, since ending it takes the lock.
        var unclaimedStream: AsyncThrowingStream<Data, any Error>?
        var reason: any Error
        var finishWaiters: [FinishWaiter]
    }

    private(set) var reader: Reader = .done
    private(set) var connection: Connection = .pending
    private(set) var progress: Progress = .sending
    /// Why the exchange ends, when it ends by an error; the first reason wins.
    private(set) var reason: (any Error)?
    private var finishWaiters: [FinishWaiter] = []
    /// Whether the connection was kept alive from an earlier exchange.
    let reused: Bool
    /// Whether the request may be sent twice (GET, HEAD).
    let repeatable: Bool

    init(reused: Bool, repeatable: Bool) {
        self.reused = reused
        self.repeatable = repeatable
    }

    /// A streamed response's caller waits for the head.
    mutating func started(
        streaming head: Head, stream: AsyncThrowingStream<Data, any Error>, source: AsyncThrowingStream<Data, any Error>.Continuation
    ) {
        reader = .awaitingHead(head, stream, source)
    }

    /// A whole response's caller waits.
    mutating func started(whole: Whole) {
        reader = .collecting(whole, nil)
    }

    /// A channel is attached. - Returns: `false` when the exchange is closing (the channel is refused).
    mutating func attached(_ channel: Channel) -> Bool {
        guard case .pending = connection else { return false }
        connection = .attached(channel)
        return true
    }

    /// A close is asked for (the consumer ended the body, the caller was cancelled, the response
    /// ended, or the channel met `reason`).
    /// - Returns: the channel to close, the first time a close is asked for while one is attached.
    mutating func closeRequested(because reason: (any Error)?) -> Channel? {
        if self.reason == nil { self.reason = reason }
        switch connection {
        case .pending:
            connection = .closing
            return nil
        case .attached(let channel):
            connection = .closing
            return channel
        case .closing, .finished:
            return nil
        }
    }

    /// The response's head arrived.
    /// - Returns: the streamed response's caller to hand the head and stream to; `nil` when the
    ///   exchange is closing (the caller hears why once it finishes) or the response is whole.
    mutating func headReceived(status: Int, headers: [String: String]) -> (Head, AsyncThrowingStream<Data, any Error>)? {
        progress = .answered
        guard !isClosing else { return nil }
        switch reader {
        case .awaitingHead(let head, let stream, let source):
            reader = .streaming(source)
            return (head, stream)
        case .collecting(let whole, _):
            reader = .collecting(whole, SyncResponse(statusCode: status, headers: headers))
            return nil
        case .streaming, .complete, .done:
            return nil
        }
    }

    /// A piece of the body arrived: a whole response keeps it.
    /// - Returns: the streamed body to yield it to.
    mutating func bodyReceived(_ piece: Data) -> AsyncThrowingStream<Data, any Error>.Continuation? {
        switch reader {
        case .streaming(let source):
            return source
        case .collecting(let whole, var response?):
            reader = .done  // no copy of the body while it grows
            response.body.append(piece)
            reader = .collecting(whole, response)
            return nil
        case .awaitingHead, .collecting, .complete, .done:
            return nil
        }
    }

    /// The response ended: a whole response is complete.
    /// - Returns: the streamed body to finish. The exchange then asks for the close.
    mutating func responseEnded() -> AsyncThrowingStream<Data, any Error>.Continuation? {
        switch reader {
        case .streaming(let source):
            reader = .done
            return source
        case .collecting(let whole, let response?):
            reader = .complete(whole, response)
            return nil
        case .awaitingHead, .collecting, .complete, .done:
            return nil
        }
    }

    /// The whole request was written.
    mutating func requestWritten() {
        progress = max(progress, .written)
    }

    /// A whole response was read to its end on a connection that may stay open.
    /// - Returns: the caller and its response, unless the exchange is closing or the response is
    ///   not whole: the exchange then lets go of the channel (it goes back to its pool).
    mutating func handOver() -> (Whole, SyncResponse)? {
        guard !isClosing else { return nil }
        switch reader {
        case .collecting(let whole, let response?), .complete(let whole, let response):
            reader = .done
            connection = .closing
            return (whole, response)
        case .awaitingHead, .streaming, .collecting, .done:
            return nil
        }
    }

    /// Someone waits for the end of the exchange.
    /// - Returns: `true` when it has ended already (resume the waiter now); otherwise the
    ///   waiter is kept and handed back by ``finished(fallback:)``.
    mutating func awaitFinish(_ waiter: FinishWaiter) -> Bool {
        if case .finished = connection { return true }
        finishWaiters.append(waiter)
        return false
    }

    /// The exchange ended: the channel closed (`fallback` is a lost connection) or no connection
    /// was made (`fallback` is why). A complete whole response goes to its caller; a caller still
    /// waiting otherwise, or a body not finished, ends with the first reason given, or with
    /// `fallback` — or with ``HTTPExchange/StaleConnection`` when the request may go again on a
    /// new connection (a reused connection lost before anything of the response arrived, the
    /// request not written or repeatable).
    mutating func finished(fallback: any Error) -> Finish {
        connection = .finished
        let lost = reason.map { ($0 as? URLError)?.code == .networkConnectionLost } ?? true
        let stale = reused && lost && progress < .answered && (progress < .written || repeatable)
        let reason: any Error = stale ? HTTPExchange.StaleConnection() : self.reason ?? fallback
        var finish = Finish(reason: reason, finishWaiters: finishWaiters)
        finishWaiters = []
        switch reader {
        case .awaitingHead(let head, let stream, let source):
            finish.resumption = .streamFailed(head, reason)
            (finish.body, finish.unclaimedStream) = (source, stream)
        case .streaming(let source):
            finish.body = source
        case .collecting(let whole, _):
            finish.resumption = .whole(whole, .failure(reason))
        case .complete(let whole, let response):
            finish.resumption = .whole(whole, .success(response))
        case .done:
            break
        }
        reader = .done
        return finish
    }

    private var isClosing: Bool {
        switch connection {
        case .pending, .attached: false
        case .closing, .finished: true
        }
    }
}

extension HTTPExchangeStateMachine.Finish: Sendable where Head: Sendable, Whole: Sendable, FinishWaiter: Sendable {}
extension HTTPExchangeStateMachine.Finish.Resumption: Sendable where Head: Sendable, Whole: Sendable {}
#endif
