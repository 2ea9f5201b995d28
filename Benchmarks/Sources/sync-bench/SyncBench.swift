import ArgumentParser
import Foundation

/// `sync-bench`: CipherSync measured against the goals of docs/performance.md, each figure beside
/// its reference measured in the same run on the same machine, printed as their ratio; the
/// workloads one by one under `sync-bench diagnose`.
@main
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-bench",
        abstract: "Measures CipherSync against its performance goals: each figure's ratio to a reference measured in the same run.",
        discussion: """
            By default: exactly the workloads of the goals (N = 1,000,000 items unless -n says
            otherwise, M operations, a store of --store-megabytes MB for the key tools), each
            goal's figure, its reference, their ratio, the goal and whether it is met, then every
            record they come from. The full pull (encrypted store) against the same rows inserted
            straight through SQLCipher and against the plain pull; the serial pushes (a server with
            its tables in memory) against the same inserts from a bare socket; the batched pushes
            (the seeded server, an SQLite file) against the SQLCipher insert; sync-keys encrypt
            and rotate against sqlcipher_export; the offline writes against the same INSERTs
            through SyncSQLite; the client's peak RSS of the pull.
            --attachments: the attachment goals instead, on encrypted stores: a file of
            --attachment-megabytes MB attached and exported (reference: OpenSSL's AES-256-GCM over
            the same file in 1 MiB pieces, fsync'd once), --attachment-files attachments of
            --attachment-kilobytes KB uploaded by a push and downloaded (reference: the same
            content sent and fetched from a bare socket), and sync-keys rotate of a store before
            and after --attachment-store-megabytes MB of attachments were added.
            --fleet: the fleet goals instead: idle change streams beside timed GETs and PATCHes on
            SQLite (1 instance) and PostgreSQL (2 instances), timed without and with the streams in
            --fleet-rounds rounds taking turns; their storage queries, write → event latency, and a
            sync-server child holding many streams.
            sync-bench diagnose WORKLOAD…: the workloads one by one (sync-bench diagnose --help).
            Each client workload runs in a child process of its own, so its peak memory is its own.
            The encrypted store has a raw 256-bit key: key derivation is measured on its own.
            sync-server and sync-keys are taken from the directory of this executable (build them
            into the scratch directory sync-bench is built into: CONTRIBUTING.md, Benchmarks).
            """,
        subcommands: [Diagnose.self, ChildWorkload.self, MeasureTool.self])

    @OptionGroup var options: BenchOptions
    @Flag(help: "Run the attachment goals instead.") var attachments = false
    @Flag(help: "Run the fleet goals instead.") var fleet = false

    func validate() throws {
        if attachments && fleet { throw ValidationError("--attachments and --fleet are runs of their own: choose one") }
    }

    func run() async throws {
        var options = options
        if options.items == nil { options.items = 1_000_000 }
        if fleet {
            try await options.runFleet()
            return
        }
        let startLoad = BenchOptions.loadAverage
        var records = try await options.inScratch { scratch in
            if attachments { return try await AttachmentBench(bench: options, scratch: scratch).measure() }
            return try await Headline.measure(options, in: scratch)
        }
        records.relate()
        let lines = try attachments ? AttachmentBench.lines(records, bench: options) : Headline.lines(records, bench: options)
        if options.json {
            try options.printJSON(HeadlineReport(headline: lines, records: records))
        } else {
            let header = options.header(startLoad: startLoad, attachments: attachments, serialPushesInMemory: true)
            print((header + [Headline.report(lines), "", records.report(header: [])]).joined(separator: "\n"))
        }
    }

    /// The output of `--json`: the goals' lines and every record they come from.
    struct HeadlineReport: Codable {
        var headline: [HeadlineLine]
        var records: [BenchRecord]
    }
}
