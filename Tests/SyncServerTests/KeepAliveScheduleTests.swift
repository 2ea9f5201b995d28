import Logging
import NIOCore
import NIOEmbedded
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

    /// The clock itself, on a loop whose time the test moves: a first tick one tick after the
    /// first stream, then one per tick, each waking its slice in groups spread over the tick.
    @Test(.timeLimit(.minutes(1))) func theClockWakesEachSliceOnItsLoopsTimer() async throws {
        let storage = try await SQLiteTableStorage.open(.memory, logger: .init(label: "test"))
        let loop = NIOAsyncTestingEventLoop()
        // A tick a second; 64 streams, four in each slice, woken two at a time (at 0 and 0.5 s
        // into their tick).
        let hub = ChangeHub(storage: storage, settings: ChangeStreamSettings(keepAliveInterval: .seconds(16)), clockLoop: loop)
        // Each wake-up, with the loop's time when it was seen: the test moves the time on only
        // once it has seen the wake-ups it waits for, so a wake-up is seen at its own time.
        let (woken, wake) = AsyncStream<(id: UInt64, at: NIODeadline)>.makeStream()
        let start = loop.now
        var signals: [AsyncStream<Void>.Continuation] = []
        try await withThrowingTaskGroup { group in
            var streams: [UInt64] = []
            for _ in 0..<64 {
                let (signaled, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                // Streams that watch no table: only the clock wakes them.
                let id = hub.listen([], signal: signal)
                streams.append(id)
                signals.append(signal)
                group.addTask { for await _ in signaled { wake.yield((id, loop.now)) } }
            }
            var received = woken.makeAsyncIterator()
            func next(_ count: Int) async -> [(id: UInt64, at: NIODeadline)] {
                var wakes: [(id: UInt64, at: NIODeadline)] = []
                for _ in 0..<count { if let woken = await received.next() { wakes.append(woken) } }
                return wakes
            }
            var interval: [UInt64] = []
            for tick in 1...16 {
                let slice = Set(streams.filter { $0 % 16 == UInt64(tick % 16) })
                let (first, second) = (start + .seconds(Int64(tick)), start + .seconds(Int64(tick)) + .milliseconds(500))
                await loop.advanceTime(to: first)
                let early = await next(2)
                await loop.advanceTime(to: second)
                let late = await next(2)
                #expect(early.allSatisfy { $0.at == first } && late.allSatisfy { $0.at == second }, "tick \(tick): \(early) then \(late)")
                #expect(Set((early + late).map(\.id)) == slice, "tick \(tick): \(early) then \(late)")
                interval += (early + late).map(\.id)
            }
            #expect(interval.sorted() == streams.sorted())
            // With no stream open, the clock stops: two intervals more wake nothing.
            for stream in streams { hub.remove(stream) }
            await loop.advanceTime(by: .seconds(32))
            for signal in signals { signal.finish() }
            try await group.waitForAll()
            wake.finish()
            var more: [UInt64] = []
            while let woken = await received.next() { more.append(woken.id) }
            #expect(more.isEmpty, "woken more than once an interval, or after the streams closed: \(more)")
        }
        await loop.shutdownGracefully()
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
