#if canImport(Glibc)
import Foundation
import Glibc
import BenchProcesses

/// The timed requests of the fleet workload, in rounds: the machine's drift over minutes lands in
/// both phases alike instead of in their ratio.
extension FleetWorkload {
    /// GET and PATCH times, in milliseconds.
    struct Requests {
        var gets: [Double] = []
        var patches: [Double] = []

        mutating func append(_ other: Requests) {
            gets += other.gets
            patches += other.patches
        }
    }

    /// The requests of every round pooled by phase, and the storage's statements while the
    /// rounds' streams were idle.
    struct Timings {
        var alone = Requests()
        var withStreams = Requests()
        var idleStatements = 0
        var idleSeconds = 0.0
        var failedStreams = 0
    }

    /// The samples of round `round`: its share of `samples`, the first rounds taking one more
    /// when they do not divide evenly. The rounds' shares follow one another, so both phases time
    /// the same items.
    func samples(ofRound round: Int) -> Range<Int> {
        let (share, rest) = samples.quotientAndRemainder(dividingBy: rounds)
        let start = round * share + min(round, rest)
        return start..<(start + share + (round < rest ? 1 : 0))
    }

    /// Times `samples` GETs and PATCHes on `home` without and with the streams, in `rounds`
    /// rounds: each round times its share without the streams and with them (even rounds alone
    /// first, odd rounds with the streams first). With the streams, a round opens them, leaves
    /// them idle for at least one keep-alive interval, so that they are timed in their steady
    /// state (the storage's statements counted meanwhile), times its share, checks that none has
    /// ended, closes them (resets: the server lets them go at once) and waits until the server
    /// has let them go; no thread of the benchmark reads them meanwhile (a control run with one
    /// idle stream, read by such a thread, gave medians 1.10× those without it on PostgreSQL,
    /// 1.00× once nothing read it). Without the streams, a round waits a second before timing
    /// its share: what moves the ratios is the machine's drift between phases, which many short
    /// rounds spread over both (with one idle stream, control runs gave the same medians whether
    /// this phase waited as long as the other or not at all). A phase needs about a second of
    /// requests (`sync-bench`'s default samples): the first requests after a wait are often
    /// faster than the rest (an SQLite GET median of 0.13–0.14 ms in 11 of 40 first and second
    /// chunks of 200, in 7 of the 160 later ones), so a phase of 400 timed mostly how long that
    /// lasted (its GET median 0.13 ms or 0.16–0.26 ms; 0.15–0.23 ms in phases of 2,000).
    func interleave(home: URL, metrics: URL, counters: [@Sendable () -> Int]) async throws -> Timings {
        var timings = Timings()
        let idle = max(Duration.seconds(idleSeconds), keepAlive + .seconds(1))
        for round in 0..<rounds {
            let requests = samples(ofRound: round)
            progress("fleet: round \(round + 1) of \(rounds)")
            for streamsOpen in round.isMultiple(of: 2) ? [false, true] : [true, false] {
                guard streamsOpen else {
                    try await Task.sleep(for: .seconds(1))
                    let timed = try await onOwnThread { [self] in try time(home, requests) }
                    progress(phase: "alone", timed)
                    timings.alone.append(timed)
                    continue
                }
                let (timed, statements, seconds, failed) = try await withStreams(on: home, metrics: metrics, reading: false) { fleet in
                    let before = counters.map { $0() }.reduce(0, +)
                    let clock = ContinuousClock.now
                    try await Task.sleep(for: idle)
                    let statements = counters.map { $0() }.reduce(0, +) - before
                    let seconds = ServerWorkloads.seconds(since: clock)
                    let timed = try await onOwnThread { [self] in try time(home, requests) }
                    fleet.drain()
                    return (timed, statements, seconds, fleet.failed)
                }
                progress(phase: "with the streams", timed)
                timings.withStreams.append(timed)
                (timings.idleStatements, timings.idleSeconds) = (timings.idleStatements + statements, timings.idleSeconds + seconds)
                timings.failedStreams += failed
            }
        }
        return timings
    }

    /// A progress line with the percentiles of one phase of a round: a phase that met a burst of
    /// the machine's other work stands out from the other rounds of its kind.
    func progress(phase: String, _ timed: Requests) {
        func figures(_ times: [Double]) -> String {
            let percentiles = Percentiles(times)
            return String(format: "p50 %.2f ms, p99 %.2f ms", percentiles.p50, percentiles.p99)
        }
        progress("fleet:   \(phase): GET \(figures(timed.gets)); PATCH \(figures(timed.patches))")
    }

    /// Opens `streams` idle change streams of the per-user table on `home` (stream `i` as user
    /// `i % users`), runs `body` with them (read by a thread of their own when `reading`; else
    /// ``FleetStreams/drain()`` checks them), closes them and waits until the server's
    /// open-streams gauge (scraped from `metrics`) is back at its value before they opened.
    func withStreams<T>(on home: URL, metrics: URL, reading: Bool = true, _ body: (FleetStreams) async throws -> T) async throws -> T {
        let (streams, users) = (self.streams, self.users)
        let before = try await onOwnThread { try Self.openStreams(metrics) }
        let fleet = FleetStreams()
        let result: T
        do {
            try await onOwnThread { try fleet.open(streams, server: home, tables: Self.scoped) { "user\($0 % users)" } }
            if reading { fleet.startReading() }
            result = try await body(fleet)
        } catch {
            fleet.close()
            throw error
        }
        fleet.close()
        // The server lets a reset stream go at once; the bound leaves room for one it would notice
        // only when its next keep-alive cannot be written (within one interval).
        let deadline = ContinuousClock.now + keepAlive * 2 + .seconds(10)
        try await onOwnThread {
            var open = try Self.openStreams(metrics)
            while open > before {
                guard ContinuousClock.now < deadline else {
                    throw BenchError("the server still holds \(open - before) of \(streams) closed change streams")
                }
                usleep(20_000)
                open = try Self.openStreams(metrics)
            }
        }
        return result
    }

    /// The change streams the server of `metrics` holds now: its `ciphersync_change_streams_open`
    /// gauge.
    static func openStreams(_ metrics: URL) throws -> Int {
        var scraper = try BareSender(server: metrics)
        defer { scraper.close() }
        let (status, body) = try scraper.exchange(scraper.request("GET", "/metrics"))
        let name = "ciphersync_change_streams_open "
        guard status == 200,
            let line = String(decoding: body, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix(name) }),
            let value = Double(line.dropFirst(name.count).trimmingCharacters(in: .whitespaces))
        else { throw BenchError("the server's metrics (\(status)) have no \(name.dropLast()) gauge") }
        return Int(value)
    }

    /// The GETs by id and PATCHes of the shared table's items `requests` (item `r` for
    /// `r * 7919 % rows`), one at a time.
    func time(_ server: URL, _ requests: Range<Int>) throws -> Requests {
        var sender = try BareSender(server: server)
        defer { sender.close() }
        var timed = Requests()
        for sample in requests {
            let id = "r\((sample * 7_919) % rows)"
            let get = sender.request("GET", "/tables/\(Self.table)/\(id)", headers: Self.device)
            var start = ContinuousClock.now
            guard try sender.send(get) == 200 else { throw BenchError("GET \(id) failed") }
            timed.gets.append(ServerWorkloads.seconds(since: start) * 1000)
            let patch = sender.request(
                "PATCH", "/tables/\(Self.table)/\(id)", body: Array(#"{"text":"patched \#(sample)"}"#.utf8), headers: Self.device)
            start = ContinuousClock.now
            guard try sender.send(patch) == 200 else { throw BenchError("PATCH \(id) failed") }
            timed.patches.append(ServerWorkloads.seconds(since: start) * 1000)
        }
        return timed
    }
}
#endif
