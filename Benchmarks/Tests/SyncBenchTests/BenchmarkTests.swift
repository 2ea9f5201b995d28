import BenchProcesses
import Foundation
import Testing

/// The benchmark executable runs every workload on both stores and cleans up. (It measures; these
/// tests only check that it works, never how fast.)
@Suite struct BenchmarkTests {
    struct Record: Decodable {
        var workload: String
        var store: String?
        var items: Int
        var seconds: Double
        var rate: Double
        var unit: String
        var peakRSSBytes: Int?
        var ratio: Double?
        var runs: Int
        var runSeconds: [Double]
        var transferred: Int?
        var changed: Int?
        var serverCPUSeconds: Double?
        var ofReference: Double?
        var megabytes: Double?
        var ofUnobserved: Double?
        var observedResults: Int?
        var latency: Latency?

        struct Latency: Decodable {
            var p50: Double
            var p90: Double
            var p99: Double
            var max: Double
        }
    }

    let bench = BuiltTool("sync-bench")

    @Test func everyStoreWorkloadRunsOnBothStoresAndLeavesNothingBehind() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let result = try await bench.run(
            ["diagnose", "store,key-derivation", "--offline-items", "40", "--pulled-items", "120", "--runs", "1", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let records = try JSONDecoder().decode([Record].self, from: Data(result.stdout.utf8))
        let store = records.filter { $0.workload.hasPrefix("store.") }
        #expect(Set(store.map(\.workload)).count == 5)
        #expect(store.filter { $0.store == "plain" }.count == 5 && store.filter { $0.store == "encrypted" }.count == 5)
        #expect(store.allSatisfy { $0.seconds > 0 && $0.rate > 0 && $0.runs == 1 })
        #expect(store.filter { $0.store == "encrypted" }.allSatisfy { ($0.ratio ?? 0) > 0 })
        #expect(records.filter { $0.store == nil }.map(\.workload) == ["key-derivation.default", "key-derivation.pbkdf2-sha512"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)

        let refused = try await bench.run(["--runs", "0"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("counts must be positive"))
        let unknown = try await bench.run(["diagnose", "full-pull,teleport"])
        #expect(unknown.exitCode != 0 && unknown.stderr.contains("unknown workload 'teleport'"))
    }

    @Test func everyEndToEndWorkloadRunsWithTinySizesAndLeavesNothingBehind() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let workloads = "reference,full-pull,incremental-pull,push-inserts,push-updates,offline-writes,encrypt,rotate"
        let result = try await bench.run(
            ["diagnose", workloads, "--items", "300", "--operations", "20", "--store-megabytes", "1", "--runs", "1", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let records = try JSONDecoder().decode([Record].self, from: Data(result.stdout.utf8))
        func record(_ workload: String, _ store: String) throws -> Record {
            try #require(records.first { $0.workload == workload && $0.store == store }, "no \(workload) on the \(store) store")
        }
        for store in ["plain", "encrypted"] {
            let reference = try record("reference", store)
            #expect(reference.items == 300 && reference.rate > 0)
            let pull = try record("full-pull", store)
            #expect(pull.items == 300 && (pull.transferred ?? 0) >= 300 && (pull.ofReference ?? 0) > 0)
            #expect((pull.serverCPUSeconds ?? -1) >= 0)
            let incremental = try record("incremental-pull", store)
            #expect(incremental.changed == 3 && incremental.items >= 3 && (incremental.transferred ?? 0) >= incremental.items)
            for push in ["push-inserts", "push-updates", "offline-writes"] {
                let measured = try record(push, store)
                #expect(measured.items == 20 && measured.unit == "ops/s" && measured.rate > 0)
            }
            for client in ["reference", "full-pull", "incremental-pull", "push-inserts", "push-updates", "offline-writes"] {
                #expect(try record(client, store).peakRSSBytes ?? 0 > 1_000_000, "\(client) on \(store) has no peak RSS")
            }
        }
        #expect(try record("full-pull", "encrypted").ratio != nil)
        for (workload, store) in [("encrypt", "plain"), ("rotate", "encrypted")] {
            let keys = try record(workload, store)
            #expect(keys.unit == "MB/s" && (keys.megabytes ?? 0) >= 1 && keys.rate > 0)
        }

        // The pushes can also go to a second server that keeps its tables in memory; the round
        // trip (GET /health one at a time) and the bare inserts go to the pushes' server.
        let memory = try await bench.run(
            ["diagnose", "round-trip", "bare-inserts", "push-inserts", "push-updates", "--push-database", "memory", "--operations", "10", "--json"],
            environment: ["TMPDIR": scratch.url.path])
        #expect(memory.exitCode == 0, "\(memory)")
        let pushed = try JSONDecoder().decode([Record].self, from: Data(memory.stdout.utf8))
        #expect(Set(pushed.map(\.workload)) == ["round-trip", "bare-inserts", "push-inserts", "push-updates"] && pushed.count == 6)
        #expect(pushed.allSatisfy { $0.items == 10 && $0.rate > 0 })
        for floor in ["round-trip", "bare-inserts"] {
            let record = try #require(pushed.first { $0.workload == floor })
            #expect(record.store == nil && record.unit == "req/s" && (record.serverCPUSeconds ?? -1) >= 0, "\(floor)")
        }

        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
        #expect(processes(mentioning: scratch.url.path).isEmpty)
    }

    @Test func theObservedPullAndTheLiveSyncLatencyRunWithTinySizes() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        let result = try await bench.run(
            [
                "diagnose", "full-pull,observed-pull,live-latency", "--items", "300", "--live-samples", "5", "--runs", "1",
                "--pull-runs", "3", "--json",
            ],
            environment: ["TMPDIR": scratch.url.path])
        #expect(result.exitCode == 0, "\(result)")
        let records = try JSONDecoder().decode([Record].self, from: Data(result.stdout.utf8))
        for store in ["plain", "encrypted"] {
            let observed = try #require(records.first { $0.workload == "observed-pull" && $0.store == store })
            #expect(observed.items == 300 && (observed.ofUnobserved ?? 0) > 0)
            // The empty table first, then at least the state after the last page.
            #expect((observed.observedResults ?? 0) >= 2)
            let live = try #require(records.first { $0.workload == "live-latency" && $0.store == store })
            let latency = try #require(live.latency)
            #expect(live.items == 5 && live.unit == "ms (p50)" && live.seconds == latency.p50)
            #expect(0 <= latency.p50 && latency.p50 <= latency.p90 && latency.p90 <= latency.p99 && latency.p99 <= latency.max)
        }
        // The two stores took turns run by run: each ratio is the median of the runs' pairs.
        for workload in ["full-pull", "observed-pull"] {
            let plain = try #require(records.first { $0.workload == workload && $0.store == "plain" })
            let encrypted = try #require(records.first { $0.workload == workload && $0.store == "encrypted" })
            #expect(plain.runSeconds.count == 3 && encrypted.runSeconds.count == 3 && encrypted.runs == 3)
            let pairs = zip(encrypted.runSeconds, plain.runSeconds).map { $0 / $1 }.sorted()
            #expect(encrypted.ratio == pairs[1], "\(workload): \(encrypted.ratio ?? 0) is not the median of \(pairs)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
        #expect(processes(mentioning: scratch.url.path).isEmpty)

        let refused = try await bench.run(["--live-samples", "0"])
        #expect(refused.exitCode != 0 && refused.stderr.contains("counts must be positive"))
    }

    @Test func aMissingServerExecutableIsNamed() async throws {
        try #require(bench.isBuilt, "build the sync-bench product first (scripts/test does)")
        let scratch = try TemporaryDirectory(prefix: "bench")
        defer { scratch.remove() }
        // A sync-bench alone in a directory: it looks for sync-server beside itself.
        let lonely = scratch.file("sync-bench")
        do { try FileManager.default.linkItem(at: bench.url, to: lonely) } catch { try FileManager.default.copyItem(at: bench.url, to: lonely) }
        let result = try runProgram(
            lonely.path, ["diagnose", "full-pull", "--items", "10"],
            environment: bench.baseEnvironment.merging(["TMPDIR": scratch.url.path]) { $1 })
        #expect(result.status != 0)
        #expect(result.error.contains("sync-server is missing from \(scratch.url.path)"), "\(result.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == ["sync-bench"])
    }

    /// The ids of running processes whose command line mentions `text`.
    private func processes(mentioning text: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int(entry) != nil, let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return false }
            return String(decoding: line.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
        }
    }
}
