import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// An edit of an item another device deleted meanwhile is a conflict of its own kind: `todo
/// conflicts` offers to restore the item with the edit, or to accept the delete.
@Suite struct TodoDeletedConflictTests {
    init() throws {
        try #require(todo.isBuilt && ServerProcess.tool.isBuilt, "build the todo and sync-server products first (scripts/test does)")
    }

    /// A adds an item, B edits it while A deletes it; returns the devices, the item id and B's text.
    func deletedWhileEdited(_ server: ServerProcess) async throws -> (a: Device, b: Device, id: String, edit: String) {
        let a = try Device(), b = try Device()
        let id = try await a.add(uniqueText("Return the library books"))
        try await a.succeed(["sync"], server: server.url)
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["delete", id])
        try await a.succeed(["sync"], server: server.url)
        let edit = uniqueText("Return the library books (B)")
        try await b.succeed(["edit", id, "--text", edit])
        let conflicted = try await b.run(["sync"], server: server.url)
        #expect(conflicted.exitCode == 1, "\(conflicted)")
        #expect(conflicted.errorLines == ["todo: 1 change conflict with the server; resolve with `todo conflicts`."])
        let shown = try await b.succeed(["conflicts", "--json"], server: server.url)
        let listed = try JSONCoding.decode([JSONObject].self, from: Data(shown.stdout.utf8))
        #expect(listed.first?["conflict"] == "deletedOnServer", "\(shown.stdout)")
        return (a, b, id, edit)
    }

    @Test(arguments: ["restore", "client"])
    func restoringBringsTheItemBackWithTheEdit(_ choice: String) async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let (a, b, id, edit) = try await deletedWhileEdited(server)
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let resolved = try await b.run(["conflicts", "--resolve", choice], server: server.url)
        #expect(resolved.exitCode == 0, "\(resolved)")
        #expect(resolved.stdout.contains("deleted on the server"), "\(resolved.stdout)")
        #expect(resolved.stdout.contains("resolved: restore"), "\(resolved.stdout)")
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["sync"], server: server.url)
        #expect(try await a.state() == [edit: false])
        #expect(try await b.state() == [edit: false])
        #expect(try await a.items().first?["id"]?.stringValue == id)
        #expect(try await b.pending() == (0, 0))
    }

    @Test(arguments: ["accept", "server", "cancel"])
    func acceptingTheDeleteDropsTheEdit(_ choice: String) async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let (a, b, _, _) = try await deletedWhileEdited(server)
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let resolved = try await b.run(["conflicts", "--resolve", choice], server: server.url)
        #expect(resolved.exitCode == 0, "\(resolved)")
        #expect(resolved.stdout.contains("resolved: accept"), "\(resolved.stdout)")
        try await b.succeed(["sync"], server: server.url)
        try await a.succeed(["sync"], server: server.url)
        #expect(try await a.state() == [:])
        #expect(try await b.state() == [:])
        #expect(try await b.pending() == (0, 0))
    }

    /// On a terminal the question names the two choices of this kind of conflict.
    @Test func onATerminalTheDeletedConflictAsksRestoreOrAccept() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let (a, b, _, edit) = try await deletedWhileEdited(server)
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let question = "[r]estore it with your change, or [a]ccept the delete? "
        let asked = try b.runOnTerminal(["conflicts"], server: server.url, dialogue: [(question, "x"), (question, "r")])
        #expect(asked.status == 0, "\(asked.screen)")
        #expect(asked.screen.components(separatedBy: question.trimmingCharacters(in: .whitespaces)).count == 3, "asked twice")
        #expect(asked.screen.contains("resolved: restore"))
        try await a.succeed(["sync"], server: server.url)
        #expect(try await a.state() == [edit: false])
    }
}
