import Foundation

/// One measured workload on one kind of store: the median of its runs. This is the `--json`
/// output, one element per workload and store.
struct BenchRecord: Codable, Sendable {
    /// The workload's name (`full-pull`, `store.offline-inserts`, …).
    var workload: String
    /// What was measured, in words.
    var title: String
    /// `plain` or `encrypted`; `nil` where the store kind does not apply.
    var store: String?
    /// Items, operations or rows handled per run.
    var items: Int
    /// Median seconds of the runs.
    var seconds: Double
    /// The throughput at the median: `items / seconds`, or MB/s for `unit` `MB/s`.
    var rate: Double
    var unit: String
    /// The largest peak resident set of the process that ran the workload, over the runs
    /// (`nil` for the workloads that run inside the benchmark's own process).
    var peakRSSBytes: Int?
    /// Encrypted seconds ÷ plain seconds (on the encrypted record); for the pulls, whose runs on
    /// the two stores take turns, the median of the pairs' ratios.
    var ratio: Double?
    var runs: Int
    /// Seconds of each run, in the order they ran.
    var runSeconds: [Double] = []
    /// Pulls: items received over the wire (re-reads included).
    var transferred: Int?
    /// Incremental pull: items changed on the server since the previous pull.
    var changed: Int?
    /// CPU seconds of the client process in the measured part (median run).
    var clientCPUSeconds: Double?
    /// CPU seconds of `sync-server` during the measured part (median run).
    var serverCPUSeconds: Double?
    /// Full pull: its rate ÷ the reference insert's rate on the same kind of store.
    var ofReference: Double?
    /// `sync-keys`: the database size in MB (10^6 bytes).
    var megabytes: Double?
    /// `sync-keys`: the rate if the one key derivation each command makes took no time.
    var rateExcludingKeyDerivation: Double?
    /// Observed pull: its seconds ÷ the full pull's (without an observer) on the same kind of
    /// store; the median of the runs' ratios when the two took turns.
    var ofUnobserved: Double? = nil
    /// Live sync latency: its distribution in seconds.
    var latency: Latency? = nil
    /// Observed pull: the results the observer read (median run).
    var observedResults: Int? = nil

    /// Percentiles of a latency, in seconds.
    struct Latency: Codable, Sendable {
        var p50: Double
        var p90: Double
        var p99: Double
        var max: Double
    }
}

/// One run of a workload, before the runs are reduced to a ``BenchRecord``.
struct BenchSample: Sendable {
    var seconds: Double
    var items: Int
    var transferred: Int? = nil
    var clientCPUSeconds: Double? = nil
    var serverCPUSeconds: Double? = nil
    var peakRSSBytes: Int? = nil
    var megabytes: Double? = nil
    var observedResults: Int? = nil
    /// `bare-attachments`: seconds of its downloads.
    var downloadSeconds: Double? = nil

    init(seconds: Double, items: Int) {
        self.seconds = seconds
        self.items = items
    }

    init(_ report: ChildReport) {
        seconds = report.seconds
        items = report.items
        transferred = report.transferred
        clientCPUSeconds = report.cpuSeconds
        peakRSSBytes = report.peakRSSBytes
        observedResults = report.observedResults
        megabytes = report.bytes.map { Double($0) / 1_000_000 }
        downloadSeconds = report.downloadSeconds
    }
}

extension BenchRecord {
    /// The median of `samples` (by seconds; the mean of the two middle ones for an even count)
    /// with the largest peak resident set of any run.
    init(workload: String, title: String, store: String?, unit: String = "items/s", samples: [BenchSample]) {
        let sorted = samples.sorted { $0.seconds < $1.seconds }
        let middle = sorted.isEmpty ? BenchSample(seconds: 0, items: 0) : sorted[(sorted.count - 1) / 2]
        let seconds = sorted.count % 2 == 1 || sorted.isEmpty ? middle.seconds : (middle.seconds + sorted[sorted.count / 2].seconds) / 2
        self.init(
            workload: workload, title: title, store: store, items: middle.items, seconds: seconds,
            rate: (unit == "MB/s" ? middle.megabytes ?? 0 : Double(middle.items)) / max(seconds, 1e-9), unit: unit,
            peakRSSBytes: samples.compactMap(\.peakRSSBytes).max(), ratio: nil, runs: samples.count,
            transferred: middle.transferred, changed: nil, clientCPUSeconds: middle.clientCPUSeconds,
            serverCPUSeconds: middle.serverCPUSeconds, ofReference: nil, megabytes: middle.megabytes, rateExcludingKeyDerivation: nil)
        observedResults = middle.observedResults
        runSeconds = samples.map(\.seconds)
    }
}

extension BenchRecord {
    /// The median of `values` (the mean of the middle two for an even count; 0 for none).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
    }

    /// The nearest-rank percentile of ascending `sorted` values: the smallest value with at least
    /// `fraction` of them at or below it (0 of none): the latency percentiles of the fleet and of
    /// live sync.
    static func percentile(_ fraction: Double, ofSorted sorted: [Double]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[Swift.min(Swift.max(Int((fraction * Double(sorted.count)).rounded(.up)) - 1, 0), sorted.count - 1)]
    }

    /// The record of live sync latencies (seconds, one per item): the median is its
    /// `seconds`, its rate is in milliseconds.
    init(liveLatencies: [Double], store: String) {
        let sorted = liveLatencies.sorted()
        func at(_ fraction: Double) -> Double { Self.percentile(fraction, ofSorted: sorted) }
        self.init(
            workload: DiagnosticWorkload.liveLatency.rawValue, title: "live sync: A's push → B's observed query", store: store,
            items: sorted.count, seconds: at(0.5), rate: at(0.5) * 1000, unit: "ms (p50)", peakRSSBytes: nil, ratio: nil,
            runs: 1, transferred: nil, changed: nil, clientCPUSeconds: nil, serverCPUSeconds: nil, ofReference: nil,
            megabytes: nil, rateExcludingKeyDerivation: nil)
        latency = Latency(p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1))
    }
}

extension [BenchRecord] {
    /// Sets the encrypted/plain ratio of every workload measured on both kinds of store (unless
    /// the runs took turns and set it from their pairs), and
    /// how close each full pull comes to the reference insert on its kind of store.
    mutating func relate() {
        for i in indices where self[i].store == "encrypted" && self[i].ratio == nil {
            if let plain = first(where: { $0.workload == self[i].workload && $0.store == "plain" }) {
                self[i].ratio = self[i].seconds / Swift.max(plain.seconds, 1e-9)
            }
        }
        for i in indices where self[i].workload == ClientWorkload.fullPull.rawValue {
            if let reference = first(where: { $0.workload == ClientWorkload.reference.rawValue && $0.store == self[i].store }) {
                self[i].ofReference = self[i].rate / Swift.max(reference.rate, 1e-9)
            }
        }
        for i in indices where self[i].workload == ClientWorkload.observedPull.rawValue && self[i].ofUnobserved == nil {
            if let unobserved = first(where: { $0.workload == ClientWorkload.fullPull.rawValue && $0.store == self[i].store }) {
                self[i].ofUnobserved = self[i].seconds / Swift.max(unobserved.seconds, 1e-9)
            }
        }
    }

    /// The human-readable table, with a note under the workloads that have more to say.
    func report(header: [String]) -> String {
        let width = Swift.max(40, map(\.title.count).max() ?? 0) + 2
        func pad(_ text: String, _ n: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: Swift.max(0, n - text.count))
            return left ? fill + text : text + fill
        }
        var lines = header
        lines.append(
            pad("workload", width) + pad("store", 11) + pad("items", 10, left: true) + pad("seconds", 10, left: true)
                + pad("rate", 22, left: true) + pad("peak RSS", 11, left: true) + pad("enc/plain", 11, left: true))
        for record in self {
            let rate = "\(Self.number(record.rate, digits: record.rate < 100 ? 1 : 0)) \(record.unit)"
            let rss = record.peakRSSBytes.map { "\(Self.number(Double($0) / 1_048_576, digits: 0)) MiB" } ?? "-"
            lines.append(
                pad(record.title, width) + pad(record.store ?? "-", 11) + pad(Self.number(Double(record.items), digits: 0), 10, left: true)
                    + pad(String(format: "%.3f", record.seconds), 10, left: true) + pad(rate, 22, left: true) + pad(rss, 11, left: true)
                    + pad(record.ratio.map { String(format: "%.2f×", $0) } ?? "", 11, left: true))
            var notes: [String] = []
            if let ofReference = record.ofReference {
                notes.append(String(format: "%.1f %% of the reference insert's rate", ofReference * 100))
            }
            if let ofUnobserved = record.ofUnobserved {
                notes.append(String(format: "%+.1f %% time over the full pull without an observer", (ofUnobserved - 1) * 100))
            }
            if let results = record.observedResults {
                notes.append("the observer read \(results) results")
            }
            if let latency = record.latency {
                notes.append(
                    String(
                        format: "p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms", latency.p50 * 1000, latency.p90 * 1000, latency.p99 * 1000,
                        latency.max * 1000))
            }
            if let transferred = record.transferred {
                notes.append(
                    "\(Self.number(Double(transferred), digits: 0)) items transferred"
                        + (record.changed.map { " for \(Self.number(Double($0), digits: 0)) changed on the server" } ?? ""))
            }
            let noun = ["ops": "op", "rows": "row", "req": "request"].first { record.unit.hasPrefix($0.key) }?.value ?? "item"
            if let cpu = record.clientCPUSeconds, record.items > 0 {
                notes.append(String(format: "client CPU %.0f µs/", cpu * 1e6 / Double(record.items)) + noun)
            }
            if let cpu = record.serverCPUSeconds, record.items > 0 {
                notes.append(String(format: "server CPU %.0f µs/", cpu * 1e6 / Double(record.items)) + noun)
                // The server's code is the same whatever client is measured: the ratio stands
                // still when the machine's speed swings between runs, the two figures do not.
                if let client = record.clientCPUSeconds, cpu > 0 { notes.append(String(format: "client/server CPU %.2f×", client / cpu)) }
            }
            if record.unit == "MB/s", record.items > 1 {
                notes.append(String(format: "%.1f files/s", Double(record.items) / Swift.max(record.seconds, 1e-9)))
            }
            if let megabytes = record.megabytes, let excluding = record.rateExcludingKeyDerivation {
                notes.append(String(format: "%.0f MB; %.1f MB/s without the one key derivation", megabytes, excluding))
            }
            if !notes.isEmpty { lines.append("    " + notes.joined(separator: "; ")) }
        }
        return lines.joined(separator: "\n")
    }

    /// `value` with `digits` decimals and thousands separators (`12,345.6`).
    static func number(_ value: Double, digits: Int) -> String {
        let text = String(format: "%.\(digits)f", value)
        let negative = text.hasPrefix("-")
        let parts = text.dropFirst(negative ? 1 : 0).split(separator: ".", maxSplits: 1)
        var grouped = ""
        for (offset, digit) in (parts.first ?? "").enumerated() {
            if offset > 0, ((parts.first?.count ?? 0) - offset) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return (negative ? "-" : "") + grouped + (parts.count > 1 ? "." + parts[1] : "")
    }
}
