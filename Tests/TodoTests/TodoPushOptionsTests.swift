import Foundation
import Logging
import SyncServer
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// `todo push|sync --push-batching auto|off --push-parallelism N`, and `todo status` showing what
/// the server advertises, against the in-process server with and without the batch extension.
@Suite struct TodoPushOptionsTests {
    init() throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
    }

    /// The requests a server received (`METHOD /path`, from its request log).
    final class RequestLog: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func count(_ prefix: String) -> Int { all.filter { $0.hasPrefix(prefix) }.count }

        fileprivate func add(_ line: String) { lines.withLock { $0.append(line) } }

        /// A logger that records each request line the server logs.
        func logger() -> Logger {
            var logger = Logger(label: "push-options") { _ in Recorder(log: self) }
            logger.logLevel = .debug
            return logger
        }
    }

    struct Recorder: LogHandler {
        let log: RequestLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            guard event.message.description == "Request", let method = event.metadata?["hb.request.method"],
                let path = event.metadata?["hb.request.path"]
            else { return }
            log.add("\(method) \(String(describing: path).split(separator: "?").first ?? "")")
        }
    }

    /// A server with the batch extension (up to `batch` operations) or without it (0).
    func server(batch: Int, log: RequestLog) async throws -> RunningServer {
        var configuration = ServerConfiguration(port: 0, logger: log.logger())
        configuration.maxBatchOperations = batch
        return try await RunningServer.start(configuration)
    }

    func device(with items: Int) async throws -> Device {
        let device = try Device()
        for n in 0..<items { _ = try await device.add(uniqueText("Item \(n)")) }
        return device
    }

    @Test func statusShowsWhatTheServerAdvertises() async throws {
        let device = try Device()
        defer { device.directory.remove() }
        _ = try await device.add(uniqueText("Queued"))
        let log = RequestLog()
        let with = try await server(batch: 500, log: log)
        let without = try await server(batch: 0, log: log)
        let shown = try await device.succeed(["status", "--json"], server: with.url)
        let plain = try await device.succeed(["status"], server: with.url)
        let none = try await device.succeed(["status", "--json"], server: without.url)
        let nonePlain = try await device.succeed(["status"], server: without.url)
        await with.stop()
        await without.stop()
        let json = try #require(try JSONParser.parse(Data(shown.stdout.utf8)).objectValue)
        #expect(json["pending"] == 1)
        #expect(json["batch"]?.objectValue?["maxOperations"] == 500)
        #expect(json["batch"]?.objectValue?["maxBytes"] == .int(1 << 20))
        #expect(plain.stdout == "1 change queued\nbatch extension: up to 500 changes per request, 1048576 bytes (--push-batching auto uses it)\n")
        #expect(try JSONParser.parse(Data(none.stdout.utf8)).objectValue == ["pending": 1])
        #expect(nonePlain.stdout == "1 change queued\nbatch extension: not offered (one request per change)\n")

        let offline = try await device.run(["status"])
        #expect(offline.exitCode == 5, "\(offline)")
        #expect(offline.errorLines == ["todo: offline, 1 change queued"])
    }

    @Test(arguments: ["push", "sync"])
    func batchingAutoSendsBatchesWhereTheServerOffersThem(_ command: String) async throws {
        let log = RequestLog()
        let with = try await server(batch: 1000, log: log)
        let batched = try await device(with: 3), single = try await device(with: 3)
        defer {
            batched.directory.remove()
            single.directory.remove()
        }
        try await batched.succeed([command, "--push-batching", "auto"], server: with.url)
        #expect(log.count("POST /batch/todoItem") == 1)
        #expect(log.count("POST /tables/todoItem") == 0)
        try await single.succeed([command, "--push-batching", "off"], server: with.url)
        #expect(log.count("POST /batch/todoItem") == 1, "off sends no batch")
        #expect(log.count("POST /tables/todoItem") == 3)
        await with.stop()
        #expect(try await batched.pending() == (0, 0))
        #expect(try await single.pending() == (0, 0))
    }

    @Test func batchingAutoSendsOneRequestPerChangeWhereTheServerHasNoBatches() async throws {
        let log = RequestLog()
        let without = try await server(batch: 0, log: log)
        let device = try await device(with: 3)
        defer { device.directory.remove() }
        let pushed = try await device.succeed(["push", "--push-batching", "auto", "--push-parallelism", "3"], server: without.url)
        await without.stop()
        #expect(pushed.stdout == "pushed 3 changes\n")
        #expect(log.count("GET /capabilities") == 1)
        #expect(log.count("POST /batch/") == 0)
        #expect(log.count("POST /tables/todoItem") == 3)
        #expect(try await device.pending() == (0, 0))
    }

    /// Bad values are usage errors (exit 2) before anything is opened or sent: the server given
    /// refuses connections, so a run that got as far as pushing would exit 5.
    @Test(arguments: [
        (["--push-batching", "sometimes"], "sometimes"), (["--push-parallelism", "0"], "--push-parallelism must be from 1 to 16"),
        (["--push-parallelism", "17"], "--push-parallelism must be from 1 to 16"), (["--push-parallelism", "many"], "many"),
    ])
    func badValuesAreUsageErrors(_ options: [String], _ named: String) async throws {
        let device = try await device(with: 1)
        defer { device.directory.remove() }
        let before = try device.files()
        for command in ["push", "sync"] {
            let result = try await device.run([command] + options)
            #expect(result.exitCode == 2, "\(result)")
            #expect(result.stderr.contains(named), "\(result)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try device.files() == before, "the store is untouched")
    }
}
