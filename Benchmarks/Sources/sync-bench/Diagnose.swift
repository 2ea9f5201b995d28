import ArgumentParser
import Foundation

/// The workloads `sync-bench diagnose` can run, in the order they run and are printed.
enum DiagnosticWorkload: String, CaseIterable {
    case reference, fullPull = "full-pull", incrementalPull = "incremental-pull", observedPull = "observed-pull"
    case roundTrip = "round-trip", bareInserts = "bare-inserts", pushInserts = "push-inserts", pushUpdates = "push-updates"
    case offlineWrites = "offline-writes", offlineReference = "offline-reference", liveLatency = "live-latency"
    case encrypt, rotate, export, store, keyDerivation = "key-derivation", tpmUnlock = "tpm-unlock"
}

/// `sync-bench diagnose WORKLOAD…`: the workloads one by one, each on a plain and on an encrypted
/// store, with every figure they record (not the goals' ratios); `server` measures the reference
/// server alone.
struct Diagnose: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs workloads one by one and prints every record (the goals' ratios are sync-bench's own output).",
        discussion: """
            Workloads (one or more, or comma-separated; all by default):
              reference         N rows inserted straight through SQLCipher (one prepared statement, one
                                transaction): the ceiling a pull can approach
              full-pull         SyncTable.pull with a query id of the N items of a seeded sync-server
                                (a child process on 127.0.0.1) into a fresh store
              incremental-pull  the same pull again after 1 % of the server's items changed
              observed-pull     the full pull while one observer shows the table's newest 50 items
                                (SyncTable.observe), timed until it shows the last item; with
                                full-pull the two take turns run by run, and the observer's cost
                                is the median of each pair's ratio
              round-trip        M requests of GET /health, one at a time, through the client's HTTP
                                transport as a push sends: the floor under a push of one request
                                at a time (both HTTP stacks, loopback, no table work)
              bare-inserts      M inserts, one at a time, from a bare socket (ready-made HTTP/1.1 text,
                                no client stack, no store) to the pushes' server: what the server
                                alone allows a push of one request at a time
              push-inserts      M queued inserts pushed; push-updates: M queued updates pushed
              offline-writes    M inserts through the sync table (row and queued operation each)
              offline-reference the same M rows and queued operations written straight through SQLCipher
                                on the store's connection, two prepared INSERTs in one transaction each
              encrypt, rotate   sync-keys encrypt / rotate on a store of --store-megabytes MB
              export            sqlcipher_export of the same plain and encrypted stores into a new keyed
                                database (the reference of encrypt and rotate), each run beside theirs
              live-latency      live sync: from device A's push returning to device B's observed query
                                showing the item (B runs startLiveSync; a server with tables in memory)
              store             the store's workloads in this process
              key-derivation    unlocking a key envelope of each production key profile
              tpm-unlock        unlocking a key envelope through its TPM slot (a software TPM on
                                loopback, a new connection per unlock; no PIN and PIN) and through
                                its passphrase slot (default profile)
            server (alone): the reference server over real HTTP in this process: requests per second
            of a mixed load (--clients, --requests-per-client) on SQLite, on PostgreSQL with one and
            with two instances, and a full pull of --server-pull-items items on each engine.
            N is 100,000 unless -n or --million says otherwise. The pushes go to the seeded server
            (a SQLite file) or, with --push-database memory, to a second server keeping its tables
            in memory. The full pull and the pushes run --pull-runs / --push-runs times.
            """)

    @Argument(help: ArgumentHelp("Workloads to run (default: all but server).", valueName: "workload"))
    var workloads: [String] = []
    @OptionGroup var options: BenchOptions

    /// The name that runs the server workloads, alone.
    static let server = "server"

    /// The names given, split at commas.
    private var names: [String] {
        workloads.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func validate() throws {
        if names.contains(Self.server) {
            guard names.allSatisfy({ $0 == Self.server }) else { throw ValidationError("server runs alone: leave out the other workloads") }
            return
        }
        _ = try selection()
    }

    /// The workloads named.
    func selection() throws -> Set<DiagnosticWorkload> {
        guard !names.isEmpty else { return Set(DiagnosticWorkload.allCases) }
        var selected = Set<DiagnosticWorkload>()
        for name in names {
            guard let workload = DiagnosticWorkload(rawValue: name) else {
                let known = DiagnosticWorkload.allCases.map(\.rawValue) + [Self.server]
                throw ValidationError("unknown workload '\(name)'; choose from \(known.joined(separator: ", "))")
            }
            selected.insert(workload)
        }
        return selected
    }

    func run() async throws {
        var options = options
        if options.items == nil { options.items = 100_000 }
        if names.contains(Self.server) {
            let workloads = ServerWorkloads(
                clients: options.clients, operationsPerClient: options.requestsPerClient, pulledItems: options.serverPullItems,
                postgresURL: options.postgresURL)
            let results = try await workloads.run()
            if options.json { try options.printJSON(results) } else { print(ServerWorkloads.report(results, clients: options.clients)) }
            return
        }
        let selected = try selection()
        let startLoad = BenchOptions.loadAverage
        var records = try await options.inScratch { try await measure(selected, options, in: $0) }
        records.relate()
        if options.json { try options.printJSON(records) } else { print(records.report(header: options.header(startLoad: startLoad))) }
    }

    private func measure(_ selected: Set<DiagnosticWorkload>, _ options: BenchOptions, in scratch: Scratch) async throws -> [BenchRecord] {
        var records = try await EndToEndBench(bench: options, scratch: scratch, selected: selected).measure()
        if selected.contains(.store) {
            options.progress("store workloads")
            records += try await StoreBench.measure(options, in: scratch.url)
        }
        if selected.contains(.keyDerivation) {
            options.progress("key derivation")
            records += try StoreBench.keyDerivation(runs: options.runs)
        }
        if selected.contains(.tpmUnlock) {
            records += try TPMUnlockBench.measure(runs: options.runs) { options.progress($0) }
        }
        return records
    }
}
