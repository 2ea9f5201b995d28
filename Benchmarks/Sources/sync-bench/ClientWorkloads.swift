import ArgumentParser
import Foundation
import SyncClient
import SyncKeys
import SyncSQLite
import SyncStore
import SyncWire

/// What one client workload measured in its own process, printed as one JSON line.
struct ChildReport: Codable, Sendable {
    /// Wall-clock seconds of the measured part.
    var seconds: Double
    /// Items pulled (distinct, applied), operations pushed or written, or rows inserted.
    var items: Int
    /// Items received over the wire (pulls: every item of every page, re-reads included).
    var transferred: Int?
    /// CPU seconds (user + system) this process spent in the measured part.
    var cpuSeconds: Double
    /// The process's peak resident set in bytes (its whole life, set-up included).
    var peakRSSBytes: Int
    /// Observed pull: the results the observer read.
    var observedResults: Int? = nil
    /// Attachment workloads: the content bytes written, read or transferred.
    var bytes: Int? = nil
    /// `bare-attachments`: seconds of the downloads (`seconds` holds the uploads').
    var downloadSeconds: Double? = nil
}

/// The client workloads, each run in a child process of its own so its memory is its own.
enum ClientWorkload: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// An incremental pull (query id) of every server item into a fresh store.
    case fullPull = "full-pull"
    /// An incremental pull into a store that already pulled everything once.
    case incrementalPull = "incremental-pull"
    /// The full pull while one observer shows the pulled table's newest 50 items (by id), timed
    /// until the observer has read the state after the last page.
    case observedPull = "observed-pull"
    /// `count` requests of `GET /health`, one at a time, as a push sends its requests.
    case roundTrip = "round-trip"
    /// `count` inserts, one at a time, over a bare socket (``BareSender``): the server alone.
    case bareInserts = "bare-inserts"
    /// `count` inserts queued through the sync table (not measured), then one push.
    case pushInserts = "push-inserts"
    /// `count` rows of a store that pushed them updated through the sync table (not measured),
    /// then one push.
    case pushUpdates = "push-updates"
    /// `count` inserts through the sync table: the row and its queued operation, one
    /// transaction each.
    case offlineWrites = "offline-writes"
    /// `count` rows inserted straight through SQLCipher with one prepared statement in one
    /// transaction: the ceiling of a pull.
    case reference
    /// `count` times the two `INSERT`s of an offline write through SyncSQLite, one transaction
    /// each: the reference of `offline-writes`.
    case offlineReference = "offline-reference"
    /// `sqlcipher_export` of the store into a new keyed database (`--target`): the reference of
    /// `sync-keys encrypt` and `rotate`.
    case export
    /// A file attached to an item of a fresh store (``ChildWorkload/attachmentWrite(at:encryption:)``).
    case attachmentWrite = "attachment-write"
    /// That attachment exported to a new file (``ChildWorkload/attachmentRead(at:encryption:)``).
    case attachmentRead = "attachment-read"
    /// The same file through OpenSSL's AES-256-GCM (``ChildWorkload/attachmentReference()``).
    case attachmentReference = "attachment-reference"
    /// Attachments uploaded by a push (``ChildWorkload/attachmentUpload(at:encryption:)``).
    case attachmentUpload = "attachment-upload"
    /// Attachments downloaded (``ChildWorkload/attachmentDownload(at:encryption:)``).
    case attachmentDownload = "attachment-download"
    /// The same content sent and fetched over a bare socket (``ChildWorkload/bareAttachments()``).
    case bareAttachments = "bare-attachments"
}

/// `sync-bench child-workload …`: runs one client workload and prints its ``ChildReport``. The
/// data key of an encrypted store comes on standard input, never in the arguments.
struct ChildWorkload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "child-workload", abstract: "Runs one client workload (used by sync-bench itself).", shouldDisplay: false)

    @Argument var workload: ClientWorkload
    @Option var store: String
    @Flag var encrypted = false
    @Option var server: String?
    @Option var count: Int
    @Option var pageSize: Int?
    @Flag var batched = false
    @Option var parallelism = 1
    @Option var target: String?
    @Option var source: String?
    @Option var bytes: Int?
    @Flag var decrypt = false

    func run() async throws {
        let encryption: StoreEncryption = encrypted ? .key(try KeyHandOver.readFromStandardInput()) : .none
        let url = URL(fileURLWithPath: store)
        let report: ChildReport
        switch workload {
        case .reference:
            report = try reference(at: url, encryption: encryption)
        case .offlineReference:
            report = try await offlineReference(at: url, encryption: encryption)
        case .export:
            report = try exportReference(at: url, encryption: encryption)
        case .attachmentWrite:
            report = try await attachmentWrite(at: url, encryption: encryption)
        case .attachmentRead:
            report = try await attachmentRead(at: url, encryption: encryption)
        case .attachmentReference:
            report = try attachmentReference()
        case .attachmentUpload:
            report = try await attachmentUpload(at: url, encryption: encryption)
        case .attachmentDownload:
            report = try await attachmentDownload(at: url, encryption: encryption)
        case .bareAttachments:
            report = try await bareAttachments()
        case .roundTrip:
            report = try await roundTrip()
        case .bareInserts:
            report = try await bareInserts()
        case .offlineWrites:
            report = try await withStore(url, encryption, create: true) { _, table in
                let pushed = try table(BenchItems.pushedTable)
                return try await measure(items: count) {
                    for i in 0..<count { try await pushed.insert(BenchItems.userItem(i)) }
                }
            }
        case .fullPull, .incrementalPull:
            report = try await withStore(url, encryption, create: workload == .fullPull) { context, table in
                try await pull(context, table(BenchItems.pulledTable))
            }
        case .observedPull:
            report = try await withStore(url, encryption, create: true) { context, table in
                try await observedPull(context, table(BenchItems.pulledTable))
            }
        case .pushInserts:
            report = try await withStore(url, encryption, create: true) { context, table in
                let pushed = try table(BenchItems.pushedTable)
                for i in 0..<count { try await pushed.insert(BenchItems.userItem(i)) }
                return try await push(context)
            }
        case .pushUpdates:
            report = try await withStore(url, encryption, create: false) { context, table in
                let pushed = try table(BenchItems.pushedTable)
                let items = try await pushed.read(Query()).items
                guard items.count >= count else { throw BenchError("the store holds \(items.count) pushed items, not \(count)") }
                for (i, item) in items.prefix(count).enumerated() {
                    var changed = item
                    changed["text"] = .string(BenchItems.text(i, revision: 1))
                    try await pushed.update(changed)
                }
                return try await push(context)
            }
        }
        print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }

    /// Opens the store (a fresh one must not exist yet), attaches a client for the server and
    /// runs `body`; the store is closed afterwards.
    func withStore(
        _ url: URL, _ encryption: StoreEncryption, create: Bool,
        _ body: (SyncContext, (String) throws -> SyncTable) async throws -> ChildReport
    ) async throws -> ChildReport {
        if create, FileManager.default.fileExists(atPath: url.path) { throw BenchError("\(url.path) exists; a fresh store was expected") }
        let store = try await SQLiteStore.open(at: url, encryption: encryption, options: StoreOptions(createIfMissing: create))
        do {
            let client = MobileServiceClient(url: URL(string: server ?? "http://127.0.0.1:9") ?? URL(fileURLWithPath: "/"))
            let context = SyncContext(client: client, store: store)
            let report = try await body(context) { try context.syncTable($0) }
            try await store.close()
            return report
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// Times `body`, which handles `items` items.
    func measure(items: Int, transferred: Int? = nil, _ body: () async throws -> Void) async rethrows -> ChildReport {
        let cpu = ProcessStatistics.ownCPUSeconds
        let elapsed = try await ContinuousClock().measure { try await body() }
        return ChildReport(
            seconds: elapsed.seconds, items: items, transferred: transferred, cpuSeconds: ProcessStatistics.ownCPUSeconds - cpu,
            peakRSSBytes: ProcessStatistics.ownPeakResidentBytes)
    }

    /// Pulls with the query id and counts the items of every page as the context reports them;
    /// `settle` runs after the pull, inside the measured time.
    private func pull(_ context: SyncContext, _ table: SyncTable, settle: () async throws -> Void = {}) async throws -> ChildReport {
        let events = await context.events()
        let pages = Task {
            var transferred = 0
            for await event in events {
                if case .pagePulled(_, let items, _) = event { transferred += items }
                if case .pullFinished = event { break }
            }
            return transferred
        }
        var applied = 0
        var report = try await measure(items: 0) {
            if let pageSize {
                applied = try await table.pull(Query(), queryId: BenchItems.queryId, pageSize: pageSize)
            } else {
                applied = try await table.pull(Query(), queryId: BenchItems.queryId)
            }
            try await settle()
        }
        report.items = applied
        report.transferred = await pages.value
        return report
    }

    /// ``pull(_:_:settle:)`` with one observer of the newest 50 items (by id; the ids grow with
    /// the index) woken by every page: timed until it has read the state with the last item.
    private func observedPull(_ context: SyncContext, _ table: SyncTable) async throws -> ChildReport {
        let last = BenchItems.id(count - 1).lowercased()
        let (started, start) = AsyncStream<Void>.makeStream()
        let observer = Task {
            var results = 0
            for try await result in table.observe(Query().orderBy(SystemProperty.id, ascending: false).top(50)) {
                results += 1
                start.yield()
                if result.items.first?[SystemProperty.id]?.stringValue?.lowercased() == last { return results }
            }
            throw BenchError("the observation ended before it showed the last pulled item")
        }
        var first = started.makeAsyncIterator()
        await first.next()  // the observer holds its first result (the empty table) before the pull starts
        do {
            var report = try await pull(context, table) { _ = try await observer.value }
            report.observedResults = try await observer.value
            return report
        } catch {
            observer.cancel()
            throw error
        }
    }

    /// Pushes the queue and checks that every operation went through.
    private func push(_ context: SyncContext) async throws -> ChildReport {
        if batched { await context.setPushBatching(.automatic) }
        try await context.setPushParallelism(parallelism)
        let queued = try await context.pendingOperationsCount
        guard queued == count else { throw BenchError("\(queued) operations are queued, not \(count)") }
        let report = try await measure(items: count) { try await context.push() }
        let left = try await context.pendingOperationsCount
        guard left == 0 else { throw BenchError("\(left) operations are still queued after the push") }
        return report
    }

    /// `count` requests of `GET /health` sent one after another through the transport a push
    /// uses, preferring its connection's executor as a push does; the connection is made first,
    /// outside the measured part, as a push's first request makes it.
    private func roundTrip() async throws -> ChildReport {
        guard let server, let url = URL(string: server)?.appendingPathComponent("health") else {
            throw BenchError("the round trip needs --server")
        }
        let transport = HTTPSyncTransport()
        let request = SyncRequest(method: .get, url: url)
        return try await withTaskExecutorPreference(transport.executor(for: url)) {
            func send() async throws {
                let response = try await transport.send(request)
                guard response.statusCode == 200 else { throw BenchError("GET /health answered \(response.statusCode)") }
            }
            try await send()
            return try await measure(items: count) {
                for _ in 0..<count { try await send() }
            }
        }
    }

    /// `count` inserts of new items sent one after another by a ``BareSender``; the requests are
    /// written before the measured part, and a first insert (which creates the table) is sent
    /// outside it.
    private func bareInserts() async throws -> ChildReport {
        #if canImport(Glibc)
        guard let server, let url = URL(string: server) else { throw BenchError("the bare inserts need --server") }
        var sender = try BareSender(server: url)
        defer { sender.close() }
        let requests = try (0...count).map { try sender.insertRequest($0) }
        func send(_ request: [UInt8]) throws {
            let status = try sender.send(request)
            guard status == 201 else { throw BenchError("an insert over the bare socket answered \(status)") }
        }
        try send(requests[0])
        return try await measure(items: count) {
            for request in requests.dropFirst() { try send(request) }
        }
        #else
        throw BenchError("the bare inserts use Glibc's sockets: Linux only")
        #endif
    }

    /// The reference: the rows a pull writes, inserted straight through SQLCipher with the
    /// store's journal settings, one prepared statement, one transaction.
    private func reference(at url: URL, encryption: StoreEncryption) throws -> ChildReport {
        if FileManager.default.fileExists(atPath: url.path) { throw BenchError("\(url.path) exists; a fresh database was expected") }
        func open(_ key: UnsafeRawBufferPointer?) throws -> Connection {
            try Connection.open(path: url.path, mode: .readWriteCreate, key: key)
        }
        let connection: Connection
        if case .key(let key) = encryption { connection = try key.withUnsafeBytes(open) } else { connection = try open(nil) }
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = NORMAL")
        try connection.execute(DirectInsert.createTable)
        let rows = DirectInsert.rows(0..<count, firstMillisecond: Int64(Date().timeIntervalSince1970 * 1000) - Int64(count))
        let cpu = ProcessStatistics.ownCPUSeconds
        let elapsed = try ContinuousClock().measure { try DirectInsert.insert(rows, into: connection) }
        return ChildReport(
            seconds: elapsed.seconds, items: count, transferred: nil, cpuSeconds: ProcessStatistics.ownCPUSeconds - cpu,
            peakRSSBytes: ProcessStatistics.ownPeakResidentBytes)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
