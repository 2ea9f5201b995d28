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
        #expect(measured.count == 5)
        #expect(measured.allSatisfy { ($0.plain ?? 0) > 0 && $0.encrypted > 0 })
        #expect(results.filter { $0.plain == nil }.map(\.workload) == [
            "unlock the key envelope (default)", "unlock the key envelope (pbkdf2-sha512)",
        ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)

        let refused = try await bench.run(["--runs", "0"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("counts must be positive"))
    }
}
