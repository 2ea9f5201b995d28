import BenchProcesses
import Foundation
import Testing

/// `sync-bench` (no subcommand) runs every goal's figure beside its reference in one run and prints
/// each ratio with its goal. (It measures; this test checks that it works and that each line is
/// what its records say, never how fast.)
@Suite struct HeadlineBenchmarkTests {
    struct Report: Decodable {
        struct Line: Decodable {
            var figure: String
            var value: Double
            var unit: String
            var reference: String?
            var referenceValue: Double?
            var ratio: Double?
            /// `nil` for a figure reported without a goal (`--attachments`).
            var goal: Double?
            var atLeast: Bool
            var met: Bool?
        }
        struct Record: Decodable {
            var workload: String
            var store: String?
            var items: Int
            var rate: Double
            var unit: String
        }
        var headline: [Line]
        var records: [Record]
    }

    let bench = BuiltTool("sync-bench")

    @Test func everyGoalIsPrintedWithItsReferenceFromTheSameRun() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let result = try await bench.run(
            ["--items", "300", "--operations", "20", "--store-megabytes", "1", "--runs", "1", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let figures = report.headline.map(\.figure)
        #expect(figures.count == 10, "\(figures)")
        for expected in [
            "full pull of 300 items, encrypted store", "serial push of 20 inserts", "serial push of 20 updates", "batched push of 20 inserts",
            "batched push of 20 updates", "sync-keys encrypt", "sync-keys rotate", "offline writes", "client peak RSS",
        ] {
            #expect(figures.contains { $0.hasPrefix(expected) }, "no headline line for \(expected)")
        }
        for line in report.headline {
            #expect(line.value > 0, "\(line.figure)")
            let goal = try #require(line.goal, "\(line.figure) has no goal")
            if let ratio = line.ratio, let reference = line.referenceValue {
                #expect(reference > 0 && ratio > 0, "\(line.figure)")
                // One run of each: every ratio is the figure over its reference.
                #expect(abs(ratio - line.value / reference) <= 1e-9 * max(1, ratio), "\(line.figure): \(ratio)")
                #expect(line.met == (line.atLeast ? ratio >= goal : ratio <= goal), "\(line.figure)")
            } else {
                #expect(line.reference == nil && !line.atLeast && line.unit == "MB" && line.met == (line.value <= goal))
            }
        }
        // The references the goals need ran beside their figures, with the sizes asked for.
        func rate(_ workload: String, _ store: String?) -> Double? {
            report.records.first { $0.workload == workload && $0.store == store }?.rate
        }
        for (workload, store) in [
            ("reference", "encrypted"), ("bare-inserts", nil), ("offline-reference", "encrypted"), ("export", "plain"), ("export", "encrypted"),
            ("batched-push-inserts", "encrypted"), ("push-updates", "encrypted"),
        ] {
            #expect((rate(workload, store) ?? 0) > 0, "no \(workload) on \(store ?? "no") store")
        }
        #expect(report.records.first { $0.workload == "offline-reference" && $0.store == "encrypted" }?.items == 20)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)

        let refused = try await bench.run(["diagnose", "server", "full-pull"])
        #expect(refused.exitCode == 64 && refused.stderr.contains("server runs alone"), "\(refused)")
    }

    @Test func theReferencesRunAsWorkloadsOfTheirOwn() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let result = try await bench.run(
            ["diagnose", "offline-reference,export", "--operations", "15", "--store-megabytes", "1", "--runs", "1", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let records = try JSONDecoder().decode([Report.Record].self, from: Data(result.stdout.utf8))
        #expect(Set(records.map(\.workload)) == ["offline-reference", "export"])
        for store in ["plain", "encrypted"] {
            let offline = try #require(records.first { $0.workload == "offline-reference" && $0.store == store })
            #expect(offline.items == 15 && offline.unit == "ops/s" && offline.rate > 0)
            let export = try #require(records.first { $0.workload == "export" && $0.store == store })
            #expect(export.unit == "MB/s" && export.rate > 0)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }
}
