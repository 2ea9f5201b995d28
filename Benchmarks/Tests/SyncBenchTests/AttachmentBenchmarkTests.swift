import BenchProcesses
import Foundation
import Testing

/// `sync-bench --attachments` runs the attachment workloads beside their references in one run
/// and prints each figure with its reference, ratio and goal. (It measures; this test checks that
/// it works, with small sizes, and that each line is what its records say, never how fast.)
@Suite struct AttachmentBenchmarkTests {
    typealias Report = HeadlineBenchmarkTests.Report

    let bench = BuiltTool("sync-bench")

    @Test func everyAttachmentWorkloadRunsBesideItsReference() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let result = try await bench.run(
            [
                "--attachments", "--attachment-megabytes", "3", "--attachment-files", "7", "--attachment-kilobytes", "30",
                "--attachment-store-megabytes", "2", "--runs", "1", "--json",
            ],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let figures = report.headline.map(\.figure)
        #expect(
            figures == [
                "attachment of 3 MB written into the encrypted store", "attachment of 3 MB read out of the encrypted store",
                "client peak RSS writing and reading the 3 MB attachment", "upload of 7 × 30 KB attachments to sync-server",
                "download of 7 × 30 KB attachments from sync-server", "sync-keys rotate of a store holding 2 MB of attachments: seconds",
            ])
        for line in report.headline {
            #expect(line.value > 0, "\(line.figure)")
            if let ratio = line.ratio, let reference = line.referenceValue {
                #expect(reference > 0 && ratio > 0, "\(line.figure)")
                // One run of each: every ratio is the figure over its reference.
                #expect(abs(ratio - line.value / reference) <= 1e-9 * max(1, ratio), "\(line.figure): \(ratio)")
                if let goal = line.goal {
                    #expect(line.met == (line.atLeast ? ratio >= goal : ratio <= goal), "\(line.figure)")
                } else {
                    #expect(line.met == nil, "\(line.figure)")
                }
            } else {
                #expect(line.unit == "MB" && line.goal == 64 && line.met == (line.value <= 64), "\(line.figure)")
            }
        }
        let goals = report.headline.map(\.goal)
        #expect(goals == [0.8, 0.8, 64, nil, nil, 1.5])
        func record(_ workload: String) -> Report.Record? { report.records.first { $0.workload == workload } }
        for workload in [
            "attachment-write", "attachment-encrypt-reference", "attachment-read", "attachment-decrypt-reference", "attachment-upload",
            "bare-attachment-upload", "attachment-download", "bare-attachment-download", "attachment-rotate", "rotate-without-attachments",
        ] {
            let found = record(workload)
            #expect(found?.unit == "MB/s" && (found?.rate ?? 0) > 0, "no \(workload) record with a rate")
        }
        for workload in ["attachment-upload", "bare-attachment-upload", "attachment-download", "bare-attachment-download"] {
            #expect(record(workload)?.items == 7, "\(workload)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    @Test func theAttachmentOptionsAreChecked() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let mixed = try await bench.run(["--attachments", "--fleet"])
        #expect(mixed.exitCode == 64 && mixed.stderr.contains("--attachments and --fleet are runs of their own"), "\(mixed)")
        let empty = try await bench.run(["--attachments", "--attachment-files", "0"])
        #expect(empty.exitCode != 0 && empty.stderr.contains("attachment sizes and counts must be positive"), "\(empty)")
    }
}
