import BenchProcesses
import Foundation
import Testing

/// `sync-bench --fleet` runs a tiny fleet on SQLite and on two PostgreSQL instances and reports
/// every figure. (It measures; this test checks that it works and what must hold at any size: no
/// storage query from idle streams, every event delivered, no stream lost, every timed request
/// pooled from the rounds — never how fast.)
@Suite struct FleetBenchmarkTests {
    struct Report: Decodable {
        struct Percentiles: Decodable {
            var p50: Double
            var p99: Double
            var count: Int
        }
        struct Comparison: Decodable {
            var alone: Percentiles
            var withStreams: Percentiles
        }
        struct Target: Decodable {
            var target: String
            var streams: Int
            var get: Comparison
            var patch: Comparison
            var idleQueriesPerSecond: Double
            var eventLatency: Percentiles
            var events: Int
            var missedEvents: Int
            var failedStreams: Int
        }
        struct Held: Decodable {
            var streams: Int
            var bytesPerStream: Double
            var failedStreams: Int
            var delivered: Int
            var descriptorLimit: Int
        }
        var keepAliveSeconds: Double
        var rounds: Int
        var targets: [Target]
        var held: Held?
    }

    let bench = BuiltTool("sync-bench")

    @Test func aTinyFleetRunsOnBothEnginesAndIdleStreamsQueryNothing() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let result = try await bench.run(
            [
                "--fleet", "--fleet-streams", "30", "--fleet-writers", "4", "--fleet-users", "3", "--fleet-rows", "300",
                // 21 samples in 2 rounds: 11 in the first, 10 in the second; a keep-alive every
                // second keeps each round's idle time and the streams' release short.
                "--fleet-samples", "21", "--fleet-rounds", "2", "--fleet-keep-alive", "1", "--fleet-held-streams", "60", "--json",
                // The test process's private cluster (the benchmark would start one of its own).
                "--postgres-url", try PostgresCluster.shared().url(),
            ],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.targets.map(\.target) == ["SQLite, 1 instance", "PostgreSQL, 2 instances"])
        #expect(report.rounds == 2 && report.keepAliveSeconds == 1)
        for target in report.targets {
            #expect(target.streams == 30)
            #expect(target.idleQueriesPerSecond == 0, "\(target.target)")
            // 4 writers × 4 writes, each to the 10 streams of its user.
            #expect(target.events == 16 * 10 && target.missedEvents == 0 && target.failedStreams == 0, "\(target)")
            #expect(target.get.alone.p50 > 0 && target.get.withStreams.p99 > 0 && target.patch.alone.p50 > 0)
            // Every round's requests, pooled per phase.
            let counts = [target.get.alone, target.get.withStreams, target.patch.alone, target.patch.withStreams].map(\.count)
            #expect(counts == [21, 21, 21, 21], "\(target.target)")
        }
        let held = try #require(report.held)
        #expect(held.streams == 60 && held.delivered == 60 && held.failedStreams == 0)
        #expect(held.descriptorLimit > 0)

        let refused = try await bench.run(["--fleet", "--fleet-streams", "0"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("fleet counts must be positive"))
    }

    @Test func roundsOutsideOneToTheSamplesAreRefused() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let none = try await bench.run(["--fleet", "--fleet-rounds", "0"])
        #expect(none.exitCode == 64 && none.stderr.contains("fleet counts must be positive"), "\(none)")
        let more = try await bench.run(["--fleet", "--fleet-samples", "3", "--fleet-rounds", "4"])
        #expect(more.exitCode == 64 && more.stderr.contains("--fleet-rounds must be at most --fleet-samples"), "\(more)")
    }
}
