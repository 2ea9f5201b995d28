import Logging
import SyncTestSupport
import Testing

@testable import SyncServer

/// When change streams send their keep-alives: one clock per server instance wakes a slice of the
/// streams at each tick, so streams opened together spread their keep-alives over the interval,
/// each stream is woken once per interval, and a silent stream speaks at every tick of its own.
@Suite struct KeepAliveScheduleTests {
    let settings = ChangeStreamSettings(keepAliveInterval: .seconds(10))

    @Test func streamsOpenedTogetherAreWokenInSlicesEachOncePerInterval() async throws {
        let storage = try await SQLiteTableStorage.open(.memory, logger: .init(label: "test"))
        // An interval of an hour: the hub's own clock does not tick during the test.
        let hub = ChangeHub(storage: storage, settings: ChangeStreamSettings(keepAliveInterval: .seconds(3_600)))
        let ticks = ChangeStreamSettings.keepAliveTicks
        var streams: [UInt64] = []
        var signals: [AsyncStream<Void>.Continuation] = []
        for _ in 0..<(ticks * 4) {
            let (_, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            streams.append(hub.listen([("todo", .shared)], signal: signal))
            signals.append(signal)
        }
        // One interval of ticks: each wakes a quarter of a sixteenth, together every stream once.
        var woken: [UInt64] = []
        for _ in 0..<ticks {
            let slice = try #require(hub.keepAliveTick()).map(\.id)
            #expect(slice.count == 4, "\(slice)")
            woken += slice
        }
        #expect(woken.sorted() == streams.sorted())
        // The next interval wakes them again, in the same order.
        var again: [UInt64] = []
        for _ in 0..<ticks { again += try #require(hub.keepAliveTick()).map(\.id) }
        #expect(again == woken)

        // A closed stream is no longer woken; with none open, the clock stops.
        hub.remove(streams[0])
        var afterClose: [UInt64] = []
        for _ in 0..<ticks { afterClose += try #require(hub.keepAliveTick()).map(\.id) }
        #expect(afterClose.sorted() == Array(streams.dropFirst()).sorted())
        for stream in streams.dropFirst() { hub.remove(stream) }
        #expect(hub.keepAliveTick()?.map(\.id) == nil)
        for signal in signals { signal.finish() }
        try await storage.close()
    }

    @Test func theClockTicksSixteenTimesPerInterval() {
        #expect(settings.keepAliveTick == .milliseconds(625))
    }

    @Test func aTickWakesItsSliceAFewStreamsAtATimeSpreadOverTheTick() {
        let tick = settings.keepAliveTick
        #expect(ChangeHub.wakes(of: 0, over: tick).isEmpty)
        let one = ChangeHub.wakes(of: 1, over: tick)
        #expect(one.map(\.after) == [.zero] && one.map(\.streams) == [0..<1])
        // A slice of 1,000 streams (62) and of 10,000 (625): every stream once, in order, at most
        // two at a time, the groups evenly spaced from the tick's start to before its end.
        for count in [62, 625] {
            let wakes = ChangeHub.wakes(of: count, over: tick)
            #expect(wakes.flatMap { Array($0.streams) } == Array(0..<count))
            #expect(wakes.allSatisfy { $0.streams.count <= ChangeHub.keepAlivesPerWake && !$0.streams.isEmpty })
            #expect(wakes.count == (count + 1) / 2)
            #expect(wakes.first?.after == .zero)
            let spacing = tick / wakes.count
            for (earlier, later) in zip(wakes, wakes.dropFirst()) {
                let gap = later.after - earlier.after
                #expect(gap >= spacing - .nanoseconds(1) && gap <= spacing + .nanoseconds(1), "\(earlier.after) → \(later.after)")
            }
            #expect(wakes.allSatisfy { $0.after < tick })
        }
    }

    @Test func aTickSendsAKeepAliveAfterHalfAnIntervalOfSilence() {
        #expect(!settings.keepAliveIsDue(after: .seconds(4)))
        #expect(settings.keepAliveIsDue(after: .seconds(5)))
        // A stream's tick comes one interval after the last keep-alive, minus the time it took to
        // write: it is due, so a silent stream speaks once per interval, not every other.
        #expect(settings.keepAliveIsDue(after: settings.keepAliveInterval - .milliseconds(50)))
    }
}
