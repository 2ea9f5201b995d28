import Foundation
import SyncKeys

/// The end-to-end workloads, run from the benchmark's main process: it seeds and starts the
/// server, runs each client workload in a child process, and reduces the runs to records.
struct EndToEndBench {
    let bench: BenchOptions
    let scratch: Scratch
    let selected: Set<DiagnosticWorkload>
    /// The data key of every encrypted store of this benchmark run (handed to children on stdin).
    let key: SecretBytes

    init(bench: BenchOptions, scratch: Scratch, selected: Set<DiagnosticWorkload>) throws {
        self.bench = bench
        self.scratch = scratch
        self.selected = selected
        key = try SecretBytes.random(count: 32)
    }

    private static let kinds = [false, true]
    private static func kind(_ encrypted: Bool) -> String { encrypted ? "encrypted" : "plain" }

    /// Runs the selected end-to-end workloads; the reference also runs whenever the full pull does.
    func measure() async throws -> [BenchRecord] {
        var records: [BenchRecord] = []
        let n = bench.serverItems, m = bench.operations
        if selected.contains(.reference) || selected.contains(.fullPull) {
            records += try await repeated(
                .reference, "reference: rows inserted straight through SQLCipher", count: n, runs: bench.runs, unit: "rows/s")
        }
        let pulls = !selected.isDisjoint(with: [.fullPull, .incrementalPull, .observedPull])
        let pushes = !selected.isDisjoint(with: [.roundTrip, .bareInserts, .pushInserts, .pushUpdates])
        if pulls || (pushes && bench.pushDatabase == .file) {
            records += try await withServer(seeded: true) { server in
                var records = pulls ? try await pullWorkloads(server) : []
                if pushes && bench.pushDatabase == .file { records += try await pushWorkloads(server) }
                return records
            }
        }
        if pushes && bench.pushDatabase == .memory {
            records += try await withServer(seeded: false) { try await pushWorkloads($0) }
        }
        if selected.contains(.liveLatency) {
            records += try await withServer(seeded: false) { server in
                try await Self.kinds.asyncMap { encrypted in
                    bench.progress("live sync latency of \(bench.liveSamples) items, \(Self.kind(encrypted))")
                    let latencies = try await LiveLatency.measure(
                        server: server.url, directory: scratch.url, encrypted: encrypted, key: key, samples: bench.liveSamples)
                    return BenchRecord(liveLatencies: latencies, store: Self.kind(encrypted))
                }
            }
        }
        if selected.contains(.offlineWrites) {
            records += try await repeated(.offlineWrites, "offline writes through the sync table", count: m, runs: bench.runs, unit: "ops/s")
        }
        if selected.contains(.offlineReference) {
            records += try await repeated(
                .offlineReference, "reference: an offline write's two INSERTs through SQLCipher", count: m, runs: bench.runs, unit: "ops/s")
        }
        if !selected.isDisjoint(with: [.encrypt, .rotate, .export]) {
            records += try await keyTool()
        }
        return records
    }

    /// Runs `workload` on a fresh store of each kind `runs` times (no server).
    private func repeated(
        _ workload: ClientWorkload, _ title: String, count: Int, runs: Int, unit: String = "items/s"
    ) async throws
        -> [BenchRecord]
    {
        try await Self.kinds.asyncMap { encrypted in
            var samples: [BenchSample] = []
            for run in 0..<runs {
                bench.progress("\(workload.rawValue), \(Self.kind(encrypted)), run \(run + 1) of \(runs)")
                let path = scratch.path("\(workload.rawValue)-\(encrypted)-\(run).db")
                defer { KeyToolBench.removeStore(at: URL(fileURLWithPath: path)) }
                samples.append(BenchSample(try await child(workload, store: path, encrypted: encrypted, server: nil, count: count)))
            }
            return BenchRecord(workload: workload.rawValue, title: title, store: Self.kind(encrypted), unit: unit, samples: samples)
        }
    }

    /// Runs one client workload in a child process.
    private func child(_ workload: ClientWorkload, store: String, encrypted: Bool, server: URL?, count: Int) async throws -> ChildReport {
        var arguments = ["child-workload", workload.rawValue, "--store", store, "--count", String(count)]
        if encrypted { arguments.append("--encrypted") }
        if let server { arguments += ["--server", server.absoluteString] }
        if let pageSize = bench.pageSize { arguments += ["--page-size", String(pageSize)] }
        if bench.batchedPush { arguments.append("--batched") }
        if bench.pushParallelism != 1 { arguments += ["--parallelism", String(bench.pushParallelism)] }
        var input = encrypted ? KeyHandOver.text(of: key) : []
        defer { for i in input.indices { input[i] = 0 } }
        let output = try await ChildRunner.run(BenchTools.ownExecutable, arguments, input: input, in: scratch)
        return try JSONDecoder().decode(ChildReport.self, from: output)
    }

    /// Runs one client workload against `server` in a child process, with the CPU time the
    /// server spent meanwhile.
    private func sample(
        _ workload: ClientWorkload, store: String, encrypted: Bool, server: BenchServer, count: Int
    ) async throws
        -> BenchSample
    {
        let cpu = server.cpuSeconds
        var sample = BenchSample(try await child(workload, store: store, encrypted: encrypted, server: server.url, count: count))
        sample.serverCPUSeconds = difference(cpu, server.cpuSeconds)
        return sample
    }

    /// The median of the ratios of runs that took turns (`samples[i]` ÷ `others[i]`), or nil
    /// when the two did not run as often.
    private static func pairedRatio(_ samples: [BenchSample], _ others: [BenchSample]?) -> Double? {
        guard let others, others.count == samples.count, !samples.isEmpty else { return nil }
        return BenchRecord.median(zip(samples, others).map { $0.seconds / max($1.seconds, 1e-9) })
    }

    /// Starts `sync-server`, runs `body`, stops it. A seeded server runs over a database file
    /// holding N items; the other keeps its tables in memory.
    private func withServer(seeded: Bool, _ body: (BenchServer) async throws -> [BenchRecord]) async throws -> [BenchRecord] {
        let tool = try BenchTools.locate("sync-server")
        var database = "memory"
        if seeded {
            let path = scratch.path("server.sqlite")
            bench.progress("seeding the server with \(bench.serverItems) items")
            let seeding = try await ContinuousClock().measure { try await BenchServer.seed(databaseAt: path, count: bench.serverItems) }
            bench.progress(String(format: "seeded in %.1f s", seeding.seconds))
            database = "sqlite:\(path)"
        }
        let server = try BenchServer(
            tool: tool, database: database, pageSize: bench.serverPageSize)
        defer { server.stop() }
        if seeded { try await server.checkSeed() }
        return try await body(server)
    }

    /// The full and the incremental pull, on each kind of store.
    private func pullWorkloads(_ server: BenchServer) async throws -> [BenchRecord] {
        var records: [BenchRecord] = []
        let n = bench.serverItems
        // The store each kind's last full pull left, for the incremental pull.
        var pulled: [Bool: String] = [:]
        func fullPull(_ encrypted: Bool, run: Int) async throws -> BenchSample {
            let path = scratch.path("full-pull-\(encrypted)-\(run).db")
            if let previous = pulled[encrypted] { KeyToolBench.removeStore(at: URL(fileURLWithPath: previous)) }
            pulled[encrypted] = path
            let sample = try await sample(.fullPull, store: path, encrypted: encrypted, server: server, count: n)
            guard sample.items == n else { throw BenchError("the full pull applied \(sample.items) items, not \(n)") }
            return sample
        }
        // The full pull and the observed pull take turns, run by run, so that each pair meets the
        // same machine (the first of a pair alternates): the observer's cost is the median of the
        // pairs' ratios. The plain and the encrypted store take turns in the same way, so that the
        // encrypted/plain ratio is the median of pairs run back to back, not of two stretches of
        // a machine whose speed moves with the hour.
        var full: [Bool: [BenchSample]] = [:], observed: [Bool: [BenchSample]] = [:]
        for run in 0..<bench.pullRuns where !selected.isDisjoint(with: [.fullPull, .observedPull]) {
            for encrypted in run.isMultiple(of: 2) ? Self.kinds : Self.kinds.reversed() {
                func unobserved() async throws {
                    guard selected.contains(.fullPull) else { return }
                    bench.progress("full pull of \(n) items, \(Self.kind(encrypted)), run \(run + 1) of \(bench.pullRuns)")
                    full[encrypted, default: []].append(try await fullPull(encrypted, run: run))
                }
                func withObserver() async throws {
                    guard selected.contains(.observedPull) else { return }
                    bench.progress("full pull of \(n) items with one observer, \(Self.kind(encrypted)), run \(run + 1) of \(bench.pullRuns)")
                    let path = scratch.path("observed-pull-\(encrypted)-\(run).db")
                    defer { KeyToolBench.removeStore(at: URL(fileURLWithPath: path)) }
                    let sample = try await sample(.observedPull, store: path, encrypted: encrypted, server: server, count: n)
                    guard sample.items == n else { throw BenchError("the observed pull applied \(sample.items) items, not \(n)") }
                    observed[encrypted, default: []].append(sample)
                }
                // Which goes first alternates, so that neither always meets the warmer machine.
                if run.isMultiple(of: 2) {
                    try await unobserved()
                    try await withObserver()
                } else {
                    try await withObserver()
                    try await unobserved()
                }
            }
        }
        var fullRecords: [BenchRecord] = [], observedRecords: [BenchRecord] = []
        for encrypted in Self.kinds {
            if let samples = full[encrypted] {
                var record = BenchRecord(
                    workload: ClientWorkload.fullPull.rawValue, title: "full pull, query id, fresh store", store: Self.kind(encrypted),
                    samples: samples)
                if encrypted { record.ratio = Self.pairedRatio(samples, full[false]) }
                fullRecords.append(record)
            }
            if let samples = observed[encrypted] {
                var record = BenchRecord(
                    workload: ClientWorkload.observedPull.rawValue, title: "full pull, one observer (newest 50)",
                    store: Self.kind(encrypted), samples: samples)
                if encrypted { record.ratio = Self.pairedRatio(samples, observed[false]) }
                record.ofUnobserved = Self.pairedRatio(samples, full[encrypted])
                observedRecords.append(record)
            }
        }
        records += fullRecords + observedRecords
        if selected.contains(.incrementalPull) {
            for encrypted in Self.kinds where pulled[encrypted] == nil {
                bench.progress("full pull of \(n) items, \(Self.kind(encrypted)) (set-up of the incremental pull)")
                _ = try await fullPull(encrypted, run: 0)
            }
            let changed = try await server.changeOnePercent(of: n)
            for encrypted in Self.kinds {
                var samples: [BenchSample] = []
                for run in 0..<bench.runs {
                    bench.progress("incremental pull, \(Self.kind(encrypted)), run \(run + 1) of \(bench.runs)")
                    let copy = scratch.path("incremental-\(encrypted)-\(run).db")
                    defer { KeyToolBench.removeStore(at: URL(fileURLWithPath: copy)) }
                    try FileManager.default.copyItem(atPath: pulled[encrypted] ?? "", toPath: copy)
                    let sample = try await sample(.incrementalPull, store: copy, encrypted: encrypted, server: server, count: n)
                    guard sample.items >= changed else {
                        throw BenchError("the incremental pull applied \(sample.items) items for \(changed) changed")
                    }
                    samples.append(sample)
                }
                var record = BenchRecord(
                    workload: ClientWorkload.incrementalPull.rawValue, title: "incremental pull after 1 % changed", store: Self.kind(encrypted),
                    samples: samples)
                record.changed = changed
                records.append(record)
            }
        }
        for path in pulled.values { KeyToolBench.removeStore(at: URL(fileURLWithPath: path)) }
        return records
    }

    /// M inserts pushed, then (from the same store) M updates pushed, on each kind of store.
    private func pushWorkloads(_ server: BenchServer) async throws -> [BenchRecord] {
        var records: [BenchRecord] = []
        let m = bench.operations
        var requests = bench.batchedPush ? "batched" : "one request each"
        if bench.pushParallelism > 1 { requests += ", \(bench.pushParallelism) in flight" }
        let place = bench.pushDatabase == .memory ? ", server in memory" : ""
        let suffix = requests + place
        // The floors under a push of one request at a time: the client's transport with no table
        // work (round trip), and the server's inserts with no client stack (bare inserts).
        for (workload, selection, title) in [
            (ClientWorkload.roundTrip, DiagnosticWorkload.roundTrip, "round trip: GET /health, one at a time"),
            (.bareInserts, .bareInserts, "inserts from a bare socket, one at a time"),
        ] where selected.contains(selection) {
            var samples: [BenchSample] = []
            for run in 0..<bench.pushRuns {
                bench.progress("\(workload.rawValue) of \(m) requests, run \(run + 1) of \(bench.pushRuns)")
                let store = scratch.path("\(workload.rawValue).db")  // never opened
                samples.append(try await sample(workload, store: store, encrypted: false, server: server, count: m))
            }
            records.append(BenchRecord(workload: workload.rawValue, title: title + place, store: nil, unit: "req/s", samples: samples))
        }
        guard !selected.isDisjoint(with: [.pushInserts, .pushUpdates]) else { return records }
        for encrypted in Self.kinds {
            var inserts: [BenchSample] = [], updates: [BenchSample] = []
            for run in 0..<bench.pushRuns {
                let path = scratch.path("push-\(encrypted)-\(run).db")
                defer { KeyToolBench.removeStore(at: URL(fileURLWithPath: path)) }
                bench.progress("push of \(m) inserts, \(Self.kind(encrypted)), run \(run + 1) of \(bench.pushRuns)")
                inserts.append(try await sample(.pushInserts, store: path, encrypted: encrypted, server: server, count: m))
                guard selected.contains(.pushUpdates) else { continue }
                // The store that pushed the inserts holds M items the server knows: update them.
                bench.progress("push of \(m) updates, \(Self.kind(encrypted)), run \(run + 1) of \(bench.pushRuns)")
                updates.append(try await sample(.pushUpdates, store: path, encrypted: encrypted, server: server, count: m))
            }
            if selected.contains(.pushInserts) {
                records.append(
                    BenchRecord(
                        workload: ClientWorkload.pushInserts.rawValue, title: "push of queued inserts (\(suffix))",
                        store: Self.kind(encrypted), unit: "ops/s", samples: inserts))
            }
            if selected.contains(.pushUpdates) {
                records.append(
                    BenchRecord(
                        workload: ClientWorkload.pushUpdates.rawValue, title: "push of queued updates (\(suffix))",
                        store: Self.kind(encrypted), unit: "ops/s", samples: updates))
            }
        }
        return records
    }

    /// `sync-keys encrypt` and `rotate`, with the rate also shown without the one key
    /// derivation each command makes (measured here on the default profile), and their
    /// reference (`export`): `sqlcipher_export` of the same store into a new keyed database.
    private func keyTool() async throws -> [BenchRecord] {
        let tool = KeyToolBench(megabytes: bench.storeMegabytes, runs: bench.runs, scratch: scratch)
        let measured = try await tool.measure(
            encrypt: selected.contains(.encrypt), rotate: selected.contains(.rotate), export: selected.contains(.export)
        ) { bench.progress($0) }
        var derivation = 0.0
        if selected.contains(.encrypt) || selected.contains(.rotate) {
            bench.progress("key derivation of the default profile (subtracted in the notes)")
            derivation = try (0..<bench.runs).map { _ in try StoreBench.unlockSeconds(.default) }.sorted()[(bench.runs - 1) / 2]
        }
        func record(_ workload: String, _ title: String, _ runs: [KeyToolBench.Run], store: String, derives: Bool = true) -> BenchRecord? {
            guard !runs.isEmpty else { return nil }
            var record = BenchRecord(
                workload: workload, title: title, store: store, unit: "MB/s",
                samples: runs.map { run in
                    var sample = BenchSample(seconds: run.report.seconds, items: measured.rows)
                    sample.megabytes = Double(run.bytes) / 1_000_000
                    sample.peakRSSBytes = run.report.peakRSSBytes > run.report.launcherRSSBytes ? run.report.peakRSSBytes : nil
                    return sample
                })
            if derives, let megabytes = record.megabytes {
                record.rateExcludingKeyDerivation = megabytes / max(record.seconds - derivation, 1e-9)
            }
            return record
        }
        return [
            record("encrypt", "sync-keys encrypt (plain → encrypted)", measured.encrypt, store: "plain"),
            record("export", "reference: sqlcipher_export into a new keyed database", measured.exportPlain, store: "plain", derives: false),
            record("rotate", "sync-keys rotate (new data key)", measured.rotate, store: "encrypted"),
            record(
                "export", "reference: sqlcipher_export into a new keyed database", measured.exportEncrypted, store: "encrypted", derives: false),
        ].compactMap { $0 }
    }
}

extension Array {
    /// `transform` applied to each element in order, awaiting each.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// `after - before`, or `nil` when either is unknown.
private func difference(_ before: Double?, _ after: Double?) -> Double? {
    guard let before, let after else { return nil }
    return after - before
}
