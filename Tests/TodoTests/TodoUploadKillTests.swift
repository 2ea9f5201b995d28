import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// `todo sync` killed with `SIGKILL` in the middle of an attachment's upload: the next run asks
/// the server how much it holds and sends only the rest (never from offset 0), and the content
/// arrives whole (another device downloads it, its SHA-256 checked), on an encrypted and a plain
/// store, through the built executables and one `sync-server` process.
@Suite struct TodoUploadKillTests {
    static let chunk = 1 << 20

    init() throws {
        try #require(todo.isBuilt && ServerProcess.tool.isBuilt, "build the todo and sync-server products first (scripts/test does)")
    }

    @Test(arguments: [false, true])
    func aKilledUploadGoesOnFromTheServersOffsetInTheNextRun(plain: Bool) async throws {
        let serverDirectory = try TemporaryDirectory(prefix: "todo-server")
        defer { serverDirectory.remove() }
        let server = try await ServerProcess.start(database: "sqlite:" + serverDirectory.path("server.db"))
        let serverPort = try #require(server.url.port)
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let flags = plain ? ["--plain"] : []
        try await a.succeed(flags + ["add", "Delivery note"])
        let list = try await a.succeed(flags + ["list", "--all", "--json"])
        let id = try #require(try JSONCoding.decode([JSONObject].self, from: Data(list.stdout.utf8)).first?["id"]?.stringValue)
        let content = Data((0..<(3 * Self.chunk + 12_345)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let source = a.directory.file("note.pdf")
        try content.write(to: source)
        try await a.succeed(flags + ["attach", id, source.path, "--content-type", "application/pdf"])

        // The first run: the rows and the first chunk reach the server; the second chunk is held
        // at the gate, and the process is killed while it waits for its answer.
        let holding = try UploadGate(upstream: serverPort, holdAt: 2)
        let first = try todo.start(
            a.deviceArguments(server: holding.url) + flags + ["sync"], environment: ["CIPHERSYNC_PASSPHRASE": a.passphrase])
        let (reports, killed) = try await onOwnThread { () -> ([String], ToolResult) in
            let reports = holding.reports(until: "held ")
            first.kill()
            return (reports, first.wait())
        }
        holding.close()
        #expect(killed.signal == SIGKILL, "\(killed)")
        #expect(reports == ["patch 0", "held \(Self.chunk)"])

        // The next run goes on at the server's offset.
        let passing = try UploadGate(upstream: serverPort)
        try await a.succeed(flags + ["sync"], server: passing.url)
        let offsets = stride(from: Self.chunk, to: content.count, by: Self.chunk).map { "patch \($0)" }
        #expect(passing.stop() == offsets, "nothing sent again from 0")

        try await b.succeed(flags + ["sync"], server: server.url)
        let copy = b.directory.file("copy.pdf")
        try await b.succeed(flags + ["export", id, "note.pdf", copy.path], server: server.url)
        #expect(try Data(contentsOf: copy) == content)
        #expect(server.stop().status == 0)
    }
}
