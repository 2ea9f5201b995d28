import Foundation
import SyncTestSupport
import Testing

/// The benchmark executable runs every workload on both stores and cleans up. (It measures; this
/// test only checks that it works, never how fast.)
@Suite struct BenchmarkTests {
    struct Result: Decodable {
        var workload: String
        var plain: Double?
        var encrypted: Double
    }

    @Test func everyWorkloadRunsOnBothStoresAndLeavesNothingBehind() async throws {
        let bench = BuiltTool("sync-bench")
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench"); defer { scratch.remove() }
        let result = try await bench.run(
            ["--offline-items", "40", "--pulled-items", "120", "--runs", "1", "--key-derivation", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let results = try JSONDecoder().decode([Result].self, from: Data(result.stdout.utf8))
        let measured = results.filter { $0.plain != nil }
        #expect(measured.count == 6)
        #expect(measured.allSatisfy { ($0.plain ?? 0) > 0 && $0.encrypted > 0 })
        #expect(results.filter { $0.plain == nil }.map(\.workload) == [
            "unlock the key envelope (default)", "unlock the key envelope (pbkdf2-sha512)",
        ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)

        let refused = try await bench.run(["--runs", "0"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("counts must be positive"))
    }

    @Test func theLiveSyncLatencyRunsAgainstTheSyncServerBuiltBesideIt() async throws {
        let bench = BuiltTool("sync-bench")
        try #require(bench.isBuilt && ServerProcess.tool.isBuilt, "build the sync-bench and sync-server products first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench"); defer { scratch.remove() }
        let result = try await bench.run(
            ["--offline-items", "10", "--pulled-items", "60", "--runs", "1", "--live-latency-samples", "5", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let latency = try JSONDecoder().decode([Result].self, from: Data(result.stdout.utf8)).filter { $0.workload.hasPrefix("live sync latency") }
        #expect(latency.map(\.workload) == ["p50", "p90", "p99", "max"].map { "live sync latency \($0), 5 items" })
        // Percentiles of one distribution never decrease, on either store.
        #expect(zip(latency, latency.dropFirst()).allSatisfy { ($0.plain ?? -1) <= ($1.plain ?? -1) && $0.encrypted <= $1.encrypted })
        #expect(latency.allSatisfy { ($0.plain ?? -1) >= 0 && $0.encrypted >= 0 })
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)

        let refused = try await bench.run(["--live-latency-samples=-1"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("counts must be positive"))
    }
}
