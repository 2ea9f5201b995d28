import Foundation
import Logging
import SyncSQL
import SyncServer
import SyncTestSupport
import SyncWire
import Testing

/// Bad input and broken surroundings: one line on standard error, the documented exit code, and
/// the store files unchanged.
@Suite struct TodoBadInputTests {
    init() throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
    }

    /// A device with one item; returns the device and the item's id.
    func deviceWithAnItem() async throws -> (Device, String) {
        let device = try Device()
        return (device, try await device.add(uniqueText("Oil the hinges")))
    }

    /// Runs `arguments` and checks the exit code, the single line of standard error, and that no
    /// file of the device changed.
    func expectRejected(
        _ device: Device, _ arguments: [String], exitCode: Int32, message: String, server: URL? = nil,
        environment: [String: String?] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try device.files()
        let result = try await device.run(arguments, server: server, environment: environment)
        #expect(result.exitCode == exitCode, "\(result)", sourceLocation: sourceLocation)
        #expect(result.errorLines == ["todo: " + message], sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(try device.files() == before, "the store is untouched", sourceLocation: sourceLocation)
    }

    @Test func anUnknownIDIsAFailure() async throws {
        let (device, id) = try await deviceWithAnItem()
        defer { device.directory.remove() }
        let unknown = id.hasPrefix("0") ? "1" : "0"
        for command in [["complete", unknown], ["delete", unknown], ["edit", unknown, "--text", "x"]] {
            try await expectRejected(device, command, exitCode: 1, message: "No todo item has an id starting with '\(unknown)'.")
        }
    }

    @Test func anAmbiguousPrefixIsAFailure() async throws {
        let device = try Device()
        defer { device.directory.remove() }
        // Ids are random GUIDs: among 17 of them two share a first hex digit.
        var byFirst: [Character: Int] = [:]
        while byFirst.values.allSatisfy({ $0 < 2 }) {
            let id = try await device.add(uniqueText("Item"))
            byFirst[id.first ?? " ", default: 0] += 1
        }
        let (digit, count) = try #require(byFirst.first { $0.value >= 2 })
        try await expectRejected(
            device, ["complete", String(digit)], exitCode: 1, message: "'\(digit)' matches \(count) items; give more of the id.")
    }

    @Test func aWrongPassphraseIsExitThreeAndTouchesNothing() async throws {
        let (device, _) = try await deviceWithAnItem()
        defer { device.directory.remove() }
        try await expectRejected(
            device, ["list"], exitCode: 3, message: "The passphrase is wrong.",
            environment: ["CIPHERSYNC_PASSPHRASE": device.passphrase + "x"])
    }

    @Test func noPassphraseSourceOffATerminalIsAUsageError() async throws {
        let (device, _) = try await deviceWithAnItem()
        defer { device.directory.remove() }
        let result = try await device.run(["list"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.errorLines.count == 1 && result.errorLines[0].hasPrefix("todo: No passphrase given"))
    }

    @Test func anEditWithNothingToChangeIsAUsageError() async throws {
        let (device, id) = try await deviceWithAnItem()
        defer { device.directory.remove() }
        let before = try device.files()
        let result = try await device.run(["edit", id])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("Give --text and/or --complete."))
        #expect(try device.files() == before)
    }

    /// The push marks the operation as attempted (it may have reached the server), so the file
    /// changes; what it holds does not.
    @Test func anUnreachableServerIsOfflineNotAnError() async throws {
        let (device, id) = try await deviceWithAnItem()
        defer { device.directory.remove() }
        let closed = try RefusingPort()
        let server = closed.url()
        let items = try await device.items()
        for command in ["sync", "push", "pull"] {
            let result = try await device.run([command], server: server)
            #expect(result.exitCode == 5, "\(result)")
            #expect(result.errorLines == ["todo: offline, 1 change queued"])
            #expect(result.stdout.isEmpty)
        }
        #expect(try await device.items() == items)
        #expect(try await device.pending() == (1, 0))
        // Local commands still work; the insert carries the edit.
        try await device.succeed(["complete", id], server: server)
        #expect(try await device.pending() == (1, 0))
        #expect(try await device.items().first?["complete"] == true)
        extendLifetime(closed)
    }

    @Test func aServerAnswering500IsAFailureAndKeepsTheQueue() async throws {
        let (device, _) = try await deviceWithAnItem()
        defer { device.directory.remove() }
        var logger = Logger(label: "broken-server")
        logger.logLevel = .critical
        let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger), storage: BrokenStorage())

        let pushed = try await device.run(["sync"], server: server.url)
        let pulled = try await device.run(["pull"], server: server.url)
        await server.stop()

        #expect(pushed.exitCode == 1, "\(pushed)")
        #expect(pushed.errorLines.count == 1 && pushed.errorLines[0].hasPrefix("todo: The server failed: HTTP 500"), "\(pushed)")
        #expect(pulled.exitCode == 1, "\(pulled)")
        #expect(pulled.errorLines.count == 1 && pulled.errorLines[0].hasPrefix("todo: The server failed: HTTP 500"), "\(pulled)")
        let (operations, errors) = try await device.pending()
        #expect(operations == 1, "the change stays queued")
        #expect(errors == 1, "with the server's answer recorded")
    }

    @Test func theHelpListsEveryExitCode() async throws {
        let help = try await todo.run(["--help"])
        #expect(help.exitCode == 0, "\(help)")
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(
            text.contains(
                "Exit codes: 0 ok, 1 failure (a conflict, a server error, an unknown or ambiguous id), 2 usage, 3 wrong passphrase, 4 key material missing or damaged (or a damaged database), 5 offline (the server cannot be reached; changes stay queued), 6 disk full (free space, then try again and sync), 7 disk I/O error, 8 wrong PIN, 9 TPM locked out, 10 TPM slot unusable here."
            ),
            "\(help.stdout)")
    }

    @Test func aServerURLThatIsNoURLIsAUsageError() async throws {
        let device = try Device()
        defer { device.directory.remove() }
        let result = try await todo.run(
            ["--store", device.store, "--server", "ftp://example", "list"], environment: ["CIPHERSYNC_PASSPHRASE": device.passphrase])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("--server must be an http(s) URL"))
        #expect(try device.files().isEmpty, "no store was created")
    }
}

/// Storage whose every call fails, as a server's would when its disk is gone: each request is a 500.
struct BrokenStorage: TableStorage {
    struct Failure: Error {}
    func ping() async throws { throw Failure() }
    func tables() async throws -> [TableSchema] { [] }
    func schema(of table: String) async throws -> TableSchema? { throw Failure() }
    func ensureColumns(_ table: String, scope: RowScope, _ columns: [String: ColumnType]) async throws -> TableSchema { throw Failure() }
    func select(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> [JSONObject] { throw Failure() }
    func count(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> Int { throw Failure() }
    func row(table: String, id: String, scope: RowScope) async throws -> JSONObject? { throw Failure() }
    func insert(table: String, scope: RowScope, item: JSONObject) async throws -> WriteResult { throw Failure() }
    func update(table: String, id: String, scope: RowScope, values: JSONObject, condition: WriteCondition) async throws -> WriteResult {
        throw Failure()
    }
    func delete(table: String, id: String, scope: RowScope, condition: WriteCondition) async throws -> WriteResult { throw Failure() }
    func close() async throws {}
}
