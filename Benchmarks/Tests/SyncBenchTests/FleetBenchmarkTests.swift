import BenchProcesses
import Foundation
import Testing

/// `sync-bench --fleet` runs a tiny fleet on SQLite and on two PostgreSQL instances and reports
/// every figure. (It measures; this test checks that it works and what must hold at any size: no
/// storage query from idle streams, every event delivered, no stream lost — never how fast.)
@Suite struct FleetBenchmarkTests {
    struct Report: Decodable {
        struct Percentiles: Decodable {
            var p50: Double
            var p99: Double
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
                "--fleet-samples", "20", "--fleet-held-streams", "60", "--json",
                // The test process's private cluster (the benchmark would start one of its own).
                "--postgres-url", try PostgresCluster.shared().url(),
            ],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        #expect(report.targets.map(\.target) == ["SQLite, 1 instance", "PostgreSQL, 2 instances"])
        for target in report.targets {
            #expect(target.streams == 30)
            #expect(target.idleQueriesPerSecond == 0, "\(target.target)")
            // 4 writers × 4 writes, each to the 10 streams of its user.
            #expect(target.events == 16 * 10 && target.missedEvents == 0 && target.failedStreams == 0, "\(target)")
            #expect(target.get.alone.p50 > 0 && target.get.withStreams.p99 > 0 && target.patch.alone.p50 > 0)
        }
        let held = try #require(report.held)
        #expect(held.streams == 60 && held.delivered == 60 && held.failedStreams == 0)
        #expect(held.descriptorLimit > 0)

        let refused = try await bench.run(["--fleet", "--fleet-streams", "0"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("fleet counts must be positive"))
    }
}
