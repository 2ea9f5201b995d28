import Foundation

/// One goal of the headline: a figure, its reference measured in the same run, their ratio and
/// whether the goal is met. This is the `headline` member of `sync-bench --json`.
struct HeadlineLine: Codable, Sendable {
    /// What was measured, in words.
    var figure: String
    var value: Double
    var unit: String
    /// The reference, in words (`nil` for a goal in absolute terms).
    var reference: String?
    var referenceValue: Double?
    var referenceUnit: String?
    /// `value ÷ referenceValue` (for times, the median of paired runs' ratios); `nil` for a goal
    /// in absolute terms.
    var ratio: Double?
    /// The goal's bound: on the ratio, or on the value when there is no reference; `nil` for a
    /// figure reported beside its reference without a goal.
    var goal: Double?
    /// Whether the goal is a lower bound (`≥`) or an upper bound (`≤`).
    var atLeast: Bool
    /// Whether the goal is met; `nil` without a goal.
    var met: Bool?
}

/// `sync-bench` (its default output): exactly the workloads the goals need, each figure beside its
/// reference measured in the same run, as one table of ratios.
enum Headline {
    /// The workloads of the headline, in three runs of ``EndToEndBench``: the reference, the
    /// full pulls and the batched pushes against the seeded server (an SQLite file); the bare
    /// inserts and the serial pushes against a server with its tables in memory; the offline
    /// writes, the key tools and their references.
    static func measure(_ bench: BenchOptions, in scratch: Scratch) async throws -> [BenchRecord] {
        var file = bench
        file.batchedPush = true
        file.pushDatabase = .file
        file.pushParallelism = 1
        var batched = try await EndToEndBench(bench: file, scratch: scratch, selected: [.reference, .fullPull, .pushInserts, .pushUpdates])
            .measure()
        for i in batched.indices where batched[i].workload.hasPrefix("push-") {
            batched[i].workload = batchedPrefix + batched[i].workload
        }
        var memory = bench
        memory.batchedPush = false
        memory.pushDatabase = .memory
        memory.pushParallelism = 1
        let serial = try await EndToEndBench(bench: memory, scratch: scratch, selected: [.bareInserts, .pushInserts, .pushUpdates]).measure()
        let local = try await EndToEndBench(
            bench: bench, scratch: scratch, selected: [.offlineWrites, .offlineReference, .encrypt, .rotate, .export]
        ).measure()
        return batched + serial + local
    }

    /// The prefix of the batched pushes' workload names in the headline's records.
    static let batchedPrefix = "batched-"

    /// The goals' lines from the records of ``measure(_:in:)``.
    static func lines(_ records: [BenchRecord], bench: BenchOptions) throws -> [HeadlineLine] {
        func record(_ workload: String, _ store: String?) throws -> BenchRecord {
            guard let found = records.first(where: { $0.workload == workload && $0.store == store }) else {
                throw BenchError("the headline has no \(workload) record\(store.map { " on the \($0) store" } ?? "")")
            }
            return found
        }
        let n = [BenchRecord].number(Double(bench.serverItems), digits: 0), m = [BenchRecord].number(Double(bench.operations), digits: 0)
        func rated(_ figure: String, _ measured: BenchRecord, _ reference: String, _ base: BenchRecord, atLeast goal: Double) -> HeadlineLine {
            let ratio = measured.rate / max(base.rate, 1e-9)
            return HeadlineLine(
                figure: figure, value: measured.rate, unit: measured.unit, reference: reference, referenceValue: base.rate,
                referenceUnit: base.unit, ratio: ratio, goal: goal, atLeast: true, met: ratio >= goal)
        }
        let reference = try record(ClientWorkload.reference.rawValue, "encrypted")
        let pull = try record(ClientWorkload.fullPull.rawValue, "encrypted"), plainPull = try record(ClientWorkload.fullPull.rawValue, "plain")
        let bare = try record(ClientWorkload.bareInserts.rawValue, nil)
        var lines = [
            rated("full pull of \(n) items, encrypted store", pull, "the same rows inserted through SQLCipher, encrypted", reference, atLeast: 0.6)
        ]
        let timeRatio = pull.ratio ?? pull.seconds / max(plainPull.seconds, 1e-9)
        lines.append(
            HeadlineLine(
                figure: "full pull of \(n) items, encrypted store: seconds", value: pull.seconds, unit: "s", reference: "the plain pull",
                referenceValue: plainPull.seconds, referenceUnit: "s", ratio: timeRatio, goal: 1.1, atLeast: false, met: timeRatio <= 1.1))
        for (workload, what) in [(ClientWorkload.pushInserts, "inserts"), (.pushUpdates, "updates")] {
            lines.append(
                rated(
                    "serial push of \(m) \(what), encrypted store, server tables in memory", try record(workload.rawValue, "encrypted"),
                    "inserts from a bare socket, same server", bare, atLeast: 0.9))
        }
        for (workload, what) in [(ClientWorkload.pushInserts, "inserts"), (.pushUpdates, "updates")] {
            lines.append(
                rated(
                    "batched push of \(m) \(what), encrypted store, server on an SQLite file",
                    try record(batchedPrefix + workload.rawValue, "encrypted"), "the same rows inserted through SQLCipher, encrypted",
                    reference, atLeast: 0.15))
        }
        for (tool, store) in [("encrypt", "plain"), ("rotate", "encrypted")] {
            var measured = try record(tool, store)
            measured.rate = measured.rateExcludingKeyDerivation ?? measured.rate
            lines.append(
                rated(
                    "sync-keys \(tool) of \(String(format: "%.0f", measured.megabytes ?? 0)) MB, key derivation excluded", measured,
                    "sqlcipher_export of the same \(store) store into a new keyed database", try record("export", store), atLeast: 1.0))
        }
        lines.append(
            rated(
                "offline writes through the sync table, encrypted store", try record(ClientWorkload.offlineWrites.rawValue, "encrypted"),
                "the same two INSERTs through SyncSQLite, one transaction each", try record(ClientWorkload.offlineReference.rawValue, "encrypted"),
                atLeast: 0.7))
        let megabytes = Double(pull.peakRSSBytes ?? 0) / 1_000_000
        lines.append(
            HeadlineLine(
                figure: "client peak RSS of the full pull of \(n) items, encrypted store", value: megabytes, unit: "MB", reference: nil,
                referenceValue: nil, referenceUnit: nil, ratio: nil, goal: 100, atLeast: false, met: pull.peakRSSBytes != nil && megabytes <= 100))
        return lines
    }

    /// The lines as a text table: figure, reference, ratio, goal, met.
    static func report(_ lines: [HeadlineLine]) -> String {
        func amount(_ value: Double, _ unit: String) -> String {
            "\([BenchRecord].number(value, digits: value < 100 ? (unit == "s" ? 3 : 1) : 0)) \(unit)"
        }
        let rows: [[String]] = lines.map { line in
            let bound = line.goal.map { (line.atLeast ? "≥ " : "≤ ") + (line.ratio == nil ? amount($0, line.unit) : String(format: "%.2f×", $0)) }
            return [
                line.figure, amount(line.value, line.unit),
                line.reference.map { "\($0): \(amount(line.referenceValue ?? 0, line.referenceUnit ?? ""))" } ?? "—",
                line.ratio.map { String(format: "%.2f×", $0) } ?? "—", bound ?? "reported", line.met.map { $0 ? "met" : "NOT met" } ?? "",
            ]
        }
        let header = ["goal", "figure", "reference (same run)", "ratio", "goal", ""]
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
