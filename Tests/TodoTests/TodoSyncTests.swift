import Foundation
import SyncTestSupport
import Testing

/// Two devices and one `sync-server` process, all through the built executables.
@Suite struct TodoSyncTests {
    init() throws {
        try #require(todo.isBuilt && ServerProcess.tool.isBuilt, "build the todo and sync-server products first (scripts/test does)")
    }

    @Test func offlineEditsReachTheOtherDeviceOnceTheServerIsBack() async throws {
        let serverDirectory = try TemporaryDirectory(prefix: "todo-server")
        defer { serverDirectory.remove() }
        let database = "sqlite:" + serverDirectory.path("server.db")
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let milk = uniqueText("Buy milk"), bread = uniqueText("Bake bread"), rain = uniqueText("Check the rain gauge")

        // A works offline, then syncs; B pulls.
        var server = try await ServerProcess.start(database: database)
        let milkID = try await a.add(milk)
        let breadID = try await a.add(bread)
        #expect(try await a.pending().operations == 2)
        let pushed = try await a.succeed(["sync"], server: server.url)
        #expect(pushed.stdout == "pushed 2 changes, pulled 2 items\n")
        try await b.succeed(["sync"], server: server.url)
        #expect(try await b.state() == [milk: false, bread: false])

        // The server goes away: local commands keep working, sync says so and exits 5 (offline).
        // (Its freed port could be handed to another test's server: a port that refuses instead.)
        #expect(server.stop().status == 0)
        let nobody = try RefusingPort()
        try await a.succeed(["complete", String(milkID.prefix(8))])
        _ = try await a.add(rain)
        let offline = try await a.run(["sync"], server: nobody.url())
        #expect(offline.exitCode == 5, "\(offline)")
        #expect(offline.errorLines == ["todo: offline, 2 changes queued"])
        #expect(try await a.pending() == (2, 0))
        try await b.succeed(["delete", breadID])
        #expect(try await b.run(["push"], server: nobody.url()).exitCode == 5)
        extendLifetime(nobody)

        // Restarted on the same database (and a new port), both devices converge.
        server = try await ServerProcess.start(database: database)
        try await a.succeed(["sync"], server: server.url)
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["sync"], server: server.url)
        let expected = [milk: true, rain: false]
        #expect(try await a.state() == expected)
        #expect(try await b.state() == expected)
        #expect(try await a.pending() == (0, 0))
        #expect(try await b.pending() == (0, 0))
        let open = try await a.succeed(["list"])
        #expect(open.stdout.contains(rain) && !open.stdout.contains(milk), "list shows open items only")
        #expect(server.stop().status == 0)

        // Nothing the devices wrote is readable in their files.
        for device in [a, b] {
            #expect(try markerHits([milk, bread, rain], in: try device.fileURLs()) == [])
            let header = try #require(try device.files()["todo.db"]).prefix(16)
            #expect(header != Data("SQLite format 3\0".utf8))
        }
    }

    /// B edits an item A changed meanwhile; the conflict is resolved by `todo conflicts --resolve`.
    @Test(arguments: ["client", "server", "cancel"])
    func aConflictIsResolved(_ choice: String) async throws {
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let original = uniqueText("Water the plants"), fromA = uniqueText("Water the plants (A)"), fromB = uniqueText("Water the plants (B)")

        let id = try await a.add(original)
        try await a.succeed(["sync"], server: server.url)
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["edit", id, "--text", fromA], server: server.url)
        try await a.succeed(["push"], server: server.url)
        try await b.succeed(["edit", String(id.prefix(6)), "--text", fromB, "--complete", "true"])

        let conflicted = try await b.run(["sync"], server: server.url)
        #expect(conflicted.exitCode == 1, "\(conflicted)")
        #expect(conflicted.errorLines == ["todo: 1 change conflict with the server; resolve with `todo conflicts`."])
        let shown = try await b.succeed(["conflicts", "--json"], server: server.url)
        #expect(shown.stdout.contains(fromA) && shown.stdout.contains(fromB), "the local and the server value are shown")
        #expect(try await b.pending() == (1, 1))

        let resolved = try await b.run(["conflicts", "--resolve", choice], server: server.url)
        #expect(resolved.exitCode == 0, "\(resolved)")
        #expect(resolved.stdout.contains("resolved: \(choice)"))
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["sync"], server: server.url)

        let expected = choice == "client" ? [fromB: true] : [fromA: false]
        #expect(try await a.state() == expected)
        #expect(try await b.state() == expected)
        #expect(try await a.pending() == (0, 0))
        #expect(try await b.pending() == (0, 0))
        for device in [a, b] {
            #expect(try markerHits([original, fromA, fromB], in: try device.fileURLs()) == [])
        }
    }

    /// On a terminal `conflicts` shows both values and asks; `sync` shows its progress.
    @Test func onATerminalConflictsAskAndSyncShowsProgress() async throws {
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let fromA = uniqueText("Sweep the porch (A)"), fromB = uniqueText("Sweep the porch (B)")
        let id = try await a.add(uniqueText("Sweep the porch"))
        try await a.succeed(["sync"], server: server.url)
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["edit", id, "--text", fromA])
        try await a.succeed(["push"], server: server.url)
        try await b.succeed(["edit", id, "--text", fromB])
        #expect(try await b.run(["push"], server: server.url).exitCode == 1)

        // An answer it does not know is asked again; "s" takes the server's item.
        let question = "use [c]lient, [s]erver or c[a]ncel? "
        let asked = try b.runOnTerminal(["conflicts"], server: server.url, dialogue: [(question, "maybe"), (question, "s")])
        #expect(asked.status == 0, "\(asked.screen)")
        #expect(asked.screen.contains("local:  \"\(fromB)\""))
        #expect(asked.screen.contains("server: \"\(fromA)\""))
        #expect(asked.screen.components(separatedBy: "use [c]lient, [s]erver or c[a]ncel?").count == 3, "asked twice")
        #expect(asked.screen.contains("resolved: server"))
        #expect(try await b.state() == [fromA: false])

        try await b.succeed(["add", uniqueText("Paint the fence")])
        let synced = try b.runOnTerminal(["sync"], server: server.url)
        #expect(synced.status == 0, "\(synced.screen)")
        #expect(synced.screen.contains("pushed 1, failed 0"))
        #expect(synced.screen.contains("pulled 2 item(s)"), "the item A changed and the one just pushed")
        #expect(try await b.pending() == (0, 0))
    }

    /// The first use on a terminal asks for a new passphrase twice, without echo; two different
    /// entries create nothing. Later uses ask once.
    @Test func onATerminalTheFirstUseAsksForANewPassphraseTwiceWithoutEcho() async throws {
        let device = try Device()
        defer { device.directory.remove() }
        let text = uniqueText("Check the oil")

        let twice = [("New passphrase for ", device.passphrase), ("Repeat: ", device.passphrase)]
        let mismatch = try device.runOnTerminal(["add", text], dialogue: [twice[0], ("Repeat: ", device.passphrase + "x")], typed: true)
        #expect(mismatch.status == 2, "\(mismatch.screen)")
        #expect(!mismatch.screen.contains(device.passphrase), "the passphrase is not echoed")
        #expect(try device.files().isEmpty, "nothing was created")

        let created = try device.runOnTerminal(["add", text], dialogue: twice, typed: true)
        #expect(created.status == 0, "\(created.screen)")
        #expect(created.screen.contains("New passphrase for ") && created.screen.contains("Repeat: "), "asked twice: \(created.screen)")
        #expect(!created.screen.contains(device.passphrase), "the passphrase is not echoed")

        let listed = try device.runOnTerminal(["list"], dialogue: [("Passphrase for ", device.passphrase)], typed: true)
        #expect(listed.status == 0, "\(listed.screen)")
        #expect(listed.screen.contains(text))
        #expect(try await device.state() == [text: false], "the typed passphrase is the store's")
    }

    /// Against a server that requires a sign-in token, `--auth-token-file` sends it; without it
    /// (or with a wrong one) sync is refused in one line and nothing queued is lost.
    @Test func aServerThatRequiresATokenGetsItFromTheTokenFile() async throws {
        let device = try Device()
        defer { device.directory.remove() }
        let secrets = try TemporaryDirectory(prefix: "todo-token")
        defer { secrets.remove() }
        let token = UUID().uuidString
        try Data((token + "\n").utf8).write(to: secrets.file("server-token"))
        try Data("not the token\n".utf8).write(to: secrets.file("wrong-token"))
        let server = try await ServerProcess.start(arguments: ["--auth-token-file", secrets.path("server-token")])
        defer { server.stop() }
        _ = try await device.add(uniqueText("Renew the permit"))

        for arguments in [["sync"], ["--auth-token-file", secrets.path("wrong-token"), "sync"]] {
            let refused = try await device.run(arguments, server: server.url)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.errorLines == ["todo: The server refused the sign-in (HTTP 401): check --auth-token-file; nothing was lost."])
            #expect(try await device.pending() == (1, 0))
        }
        let missing = try await device.run(["--auth-token-file", secrets.path("absent"), "sync"], server: server.url)
        #expect(missing.exitCode == 2 && missing.errorLines.count == 1, "\(missing)")

        let synced = try await device.run(["--auth-token-file", secrets.path("server-token"), "sync"], server: server.url)
        #expect(synced.exitCode == 0, "\(synced)")
        #expect(try await device.pending() == (0, 0))
        #expect(!synced.stdout.contains(token) && !synced.stderr.contains(token))
    }

    /// Without `--resolve` and not on a terminal, `conflicts` asks for it and changes nothing.
    @Test func conflictsWithoutATerminalNeedResolve() async throws {
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let id = try await a.add(uniqueText("Fix the gate"))
        try await a.succeed(["sync"], server: server.url)
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["edit", id, "--complete", "true"])
        try await a.succeed(["push"], server: server.url)
        try await b.succeed(["edit", id, "--text", uniqueText("Fix the gate today")])
        #expect(try await b.run(["push"], server: server.url).exitCode == 1)

        let before = try b.files()
        let asked = try await b.run(["conflicts"], server: server.url)
        #expect(asked.exitCode == 2)
        #expect(asked.errorLines == ["todo: Not on a terminal: pass --resolve client|server|cancel."])
        #expect(try b.files() == before)
    }
}
