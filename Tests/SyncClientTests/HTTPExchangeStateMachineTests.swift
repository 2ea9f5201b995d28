#if os(Linux)
import Foundation
import FoundationNetworking
import SyncWire
import Testing

@testable import SyncClient

/// The HTTP exchange's state machine without a connection: continuations and the channel are
/// plain values (a head waiter "head", a whole-response waiter "whole", channel 7).
@Suite struct HTTPExchangeStateMachineTests {
    typealias Machine = HTTPExchangeStateMachine<String, String, Int, Int>

    static func streaming(reused: Bool = false, repeatable: Bool = false) -> (Machine, AsyncThrowingStream<Data, any Error>) {
        var machine = Machine(reused: reused, repeatable: repeatable)
        let (stream, source) = AsyncThrowingStream<Data, any Error>.makeStream()
        machine.started(streaming: "head", stream: stream, source: source)
        return (machine, stream)
    }

    static func whole(reused: Bool = false, repeatable: Bool = false) -> Machine {
        var machine = Machine(reused: reused, repeatable: repeatable)
        machine.started(whole: "whole")
        return machine
    }

    static func isStale(_ error: any Error) -> Bool { error is HTTPExchange.StaleConnection }
    static func lost(_ error: any Error) -> Bool { (error as? URLError)?.code == .networkConnectionLost }

    @Test func theChannelIsClosedOnceAndTheFirstReasonWins() {
        var machine = Self.whole()
        let attached = machine.attached(7)
        #expect(attached)
        let toClose = machine.closeRequested(because: URLError(.timedOut))
        #expect(toClose == 7)
        let toClose2 = machine.closeRequested(because: CancellationError())
        #expect(toClose2 == nil)
        #expect((machine.reason as? URLError)?.code == .timedOut)
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        #expect((finish.reason as? URLError)?.code == .timedOut)
    }

    @Test func aChannelAttachedAfterACloseIsRefused() {
        var machine = Self.whole()
        let toClose = machine.closeRequested(because: CancellationError())
        #expect(toClose == nil)
        let attached = machine.attached(7)
        #expect(!attached)
        _ = machine.finished(fallback: URLError(.cancelled))
        let attached2 = machine.attached(8)
        #expect(!attached2)
    }

    @Test func aStreamedHeadIsHandedOverOnceAndItsBodyGoesToTheStream() {
        var (machine, _) = Self.streaming()
        let handed = machine.headReceived(status: 200, headers: [:])
        #expect(handed?.0 == "head")
        let handedAgain = machine.headReceived(status: 200, headers: [:])
        #expect(handedAgain == nil)
        let body = machine.bodyReceived(Data("a".utf8))
        #expect(body != nil)
        let ended = machine.responseEnded()
        #expect(ended != nil)
        let ended2 = machine.responseEnded()
        #expect(ended2 == nil, "the body is finished once")
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        #expect(finish.resumption == nil && finish.body == nil && finish.unclaimedStream == nil)
    }

    @Test func aHeadArrivingWhileClosingIsNotHandedAndTheCallerHearsWhy() {
        var (machine, _) = Self.streaming()
        _ = machine.closeRequested(because: URLError(.timedOut))
        let handed = machine.headReceived(status: 200, headers: [:])
        #expect(handed == nil)
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        guard case .streamFailed(let head, let reason)? = finish.resumption else {
            Issue.record("the waiting caller is resumed with the reason")
            return
        }
        #expect(head == "head" && (reason as? URLError)?.code == .timedOut)
        #expect(finish.body != nil && finish.unclaimedStream != nil, "the body's source ends, the stream is dropped outside the lock")
    }

    @Test func aWholeResponseReadToItsEndGoesToItsCallerWhenTheChannelCloses() throws {
        var machine = Self.whole()
        let handed = machine.headReceived(status: 201, headers: ["ETag": "\"1\""])
        #expect(handed == nil)
        let body = machine.bodyReceived(Data("{\"a\":".utf8))
        #expect(body == nil)
        let body2 = machine.bodyReceived(Data("1}".utf8))
        #expect(body2 == nil)
        let ended = machine.responseEnded()
        #expect(ended == nil)
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        guard case .whole(let whole, .success(let response))? = finish.resumption else {
            Issue.record("the complete response goes to its caller")
            return
        }
        #expect(whole == "whole" && response.statusCode == 201 && response.body == Data("{\"a\":1}".utf8))
        #expect(response.headers["ETag"] == "\"1\"")
    }

    @Test func aWholeResponseCutShortFailsWithTheLostConnection() {
        var machine = Self.whole()
        _ = machine.headReceived(status: 200, headers: [:])
        _ = machine.bodyReceived(Data("[".utf8))
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        guard case .whole(_, .failure(let error))? = finish.resumption else {
            Issue.record("an incomplete response is not handed over")
            return
        }
        #expect(Self.lost(error))
    }

    @Test func aHandedOverResponseLeavesTheChannelToItsPool() {
        var machine = Self.whole()
        let attached = machine.attached(7)
        #expect(attached)
        _ = machine.headReceived(status: 200, headers: [:])
        _ = machine.bodyReceived(Data("x".utf8))
        let handed = machine.handOver()
        #expect(handed?.0 == "whole" && handed?.1.body == Data("x".utf8))
        let toClose = machine.closeRequested(because: nil)
        #expect(toClose == nil, "a channel handed back is not closed")
        let handedOver = machine.handOver()
        #expect(handedOver == nil)
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        #expect(finish.resumption == nil, "the caller was resumed once")
    }

    @Test func nothingIsHandedOverWhileClosingOrForAStream() {
        var closing = Self.whole()
        _ = closing.headReceived(status: 200, headers: [:])
        _ = closing.closeRequested(because: CancellationError())
        let handedOver = closing.handOver()
        #expect(handedOver == nil)
        var (streamed, _) = Self.streaming()
        _ = streamed.headReceived(status: 200, headers: [:])
        let handedOver2 = streamed.handOver()
        #expect(handedOver2 == nil)
    }

    /// A reused connection the server had closed: the request goes again on a new one when
    /// nothing of the response arrived and the request was not written to its end, or may be
    /// sent twice.
    @Test(
        arguments: [
            // reused, repeatable, written, answered, reason, stale
            (true, false, false, false, nil, true),
            (true, false, true, false, nil, false),
            (true, true, true, false, nil, true),
            (true, true, false, true, nil, false),
            (true, true, false, false, URLError.Code.timedOut, false),
            (true, true, false, false, URLError.Code.networkConnectionLost, true),
            (false, true, false, false, nil, false),
        ] as [(Bool, Bool, Bool, Bool, URLError.Code?, Bool)])
    func theStaleConnectionRule(_ rule: (Bool, Bool, Bool, Bool, URLError.Code?, Bool)) {
        let (reused, repeatable, written, answered, reason, stale) = rule
        var machine = Self.whole(reused: reused, repeatable: repeatable)
        if written { machine.requestWritten() }
        if answered { _ = machine.headReceived(status: 200, headers: [:]) }
        if let reason { _ = machine.closeRequested(because: URLError(reason)) }
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        #expect(Self.isStale(finish.reason) == stale)
        guard case .whole(_, .failure(let error))? = finish.resumption else {
            Issue.record("the caller fails")
            return
        }
        #expect(Self.isStale(error) == stale)
    }

    @Test func aFailedConnectionEndsTheCallerWithItsError() {
        var machine = Self.whole(reused: false)
        let finish = machine.finished(fallback: URLError(.cannotConnectToHost))
        guard case .whole(_, .failure(let error))? = finish.resumption else {
            Issue.record("the caller fails")
            return
        }
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }

    @Test func waitersForTheEndAreResumedWhenItComesOrAtOnceAfter() {
        var machine = Self.whole()
        let now = machine.awaitFinish(1)
        #expect(!now)
        let now2 = machine.awaitFinish(2)
        #expect(!now2)
        let finish = machine.finished(fallback: URLError(.networkConnectionLost))
        #expect(finish.finishWaiters == [1, 2])
        let now3 = machine.awaitFinish(3)
        #expect(now3)
        let finish2 = machine.finished(fallback: URLError(.networkConnectionLost))
        #expect(finish2.finishWaiters.isEmpty)
    }
}
#endif
