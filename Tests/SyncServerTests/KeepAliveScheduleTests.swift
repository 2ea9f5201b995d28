import SyncTestSupport
import Testing

@testable import SyncServer

/// When a change stream sends its keep-alives: streams opened together spread their first one over
/// the interval, and a silent stream speaks at every tick.
@Suite struct KeepAliveScheduleTests {
    let settings = ChangeStreamSettings(keepAliveInterval: .seconds(10))

    @Test func streamsOpenedTogetherTakeTheirFirstTickAllOverTheInterval() {
        var generator = SeededGenerator(seed: 35)
        let ticks = (0..<1_000).map { _ in settings.firstKeepAliveTick(using: &generator) }
        #expect(ticks.allSatisfy { $0 >= .zero && $0 < settings.keepAliveInterval })
        // Each tenth of the interval holds some of them: no burst at one point of it.
        let tenths = Set(ticks.map { Int($0 / (settings.keepAliveInterval / 10)) })
        #expect(tenths == Set(0..<10), "\(tenths.sorted())")
    }

    @Test func aTickSendsAKeepAliveAfterHalfAnIntervalOfSilence() {
        #expect(!settings.keepAliveIsDue(after: .seconds(4)))
        #expect(settings.keepAliveIsDue(after: .seconds(5)))
        // A tick comes one interval after the last keep-alive, minus the time it took to write:
        // it is due, so a silent stream speaks once per interval, not every other.
        #expect(settings.keepAliveIsDue(after: settings.keepAliveInterval - .milliseconds(50)))
    }
}
