import Foundation
import SyncTestSupport
import SyncWire
import Testing

/// Answers of a tables server for the item table, as a backend that is not ours gives them:
/// `items` for every list read (its first page; later pages are empty), `refuseInserts` answers
/// every insert 409 with the sent item echoed and no version (the Node server of Azure Mobile Apps
/// when the id is taken by an item no read shows), and a read by id finds nothing.
func foreignTables(items: String = "[]", refuseInserts: Bool = false) -> @Sendable (ScriptedTablesServer.Request) -> ScriptedTablesServer.Answer {
    { request in
        let path = request.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let query = request.target.contains("?") ? String(request.target.split(separator: "?", maxSplits: 1)[1]) : ""
        guard path.hasPrefix("/tables/todoItem") else { return .init(404, json: #"{"error":"Not Found"}"#) }
        switch request.method {
        case "POST" where path == "/tables/todoItem" && refuseInserts:
            return .init(409, body: request.body)
        case "GET" where path == "/tables/todoItem":
            let later = query.split(separator: "&").contains { $0.hasPrefix("$skip=") && $0 != "$skip=0" }
            return .init(200, json: later ? "[]" : items)
        default:
            return .init(404, json: #"{"error":"Not Found"}"#)
        }
    }
}

/// A resolution that would send the server the request it refused, unchanged, is refused by
/// `todo conflicts` with a message that names the way out, exit 11, and nothing changed.
@Suite struct TodoResolutionWouldRepeatTests {
    init() throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
    }

    @Test(arguments: ["client", "restore"])
    func keepingAnInsertTheServerRefusesAgainIsRefusedWithExit11(_ choice: String) async throws {
        let server = try ScriptedTablesServer(foreignTables(refuseInserts: true))
        defer { server.stop() }
        let device = try Device()
        defer { device.directory.remove() }
        let id = try await device.add(uniqueText("Feed the cat"))
        let pushed = try await device.run(["push"], server: server.url)
        #expect(pushed.exitCode == 1, "\(pushed)")
        #expect(pushed.errorLines == ["todo: 1 change conflict with the server; resolve with `todo conflicts`."])
        let inserts = server.requests.filter { $0.hasPrefix("POST ") }.count

        let refused = try await device.run(["conflicts", "--resolve", choice], server: server.url)
        #expect(refused.exitCode == 11, "\(refused)")
        #expect(
            refused.errorLines == [
                "todo: Resolving \(id) with '\(choice)' would send the server the change it refused, unchanged, and it would "
                    + "refuse it again; nothing was changed. Resolve it with `todo conflicts --resolve cancel` (drops your change; "
                    + "`server` or `accept` take the server's side)."
            ], "\(refused)")
        #expect(server.requests.filter { $0.hasPrefix("POST ") }.count == inserts, "nothing was sent again")
        #expect(try await device.pending() == (1, 1), "the change and its error are kept")

        let cancelled = try await device.run(["conflicts", "--resolve", "cancel"], server: server.url)
        #expect(cancelled.exitCode == 0, "\(cancelled)")
        #expect(try await device.pending() == (0, 0))
        #expect(try await device.items().isEmpty)
    }

    /// On a terminal the choice that cannot work is explained, and the question asked again.
    @Test func onATerminalTheQuestionIsAskedAgain() async throws {
        let server = try ScriptedTablesServer(foreignTables(refuseInserts: true))
        defer { server.stop() }
        let device = try Device()
        defer { device.directory.remove() }
        _ = try await device.add(uniqueText("Water the plants"))
        _ = try await device.run(["push"], server: server.url)
        let (status, screen) = try device.runOnTerminal(
            ["conflicts"], server: server.url,
            dialogue: [("[a]ccept the delete? ", "restore"), ("would refuse it again", "accept")])
        #expect(status == 0, "\(screen)")
        #expect(screen.contains("resolved: accept"), "\(screen)")
        #expect(try await device.pending() == (0, 0))
    }
}

/// A pull from a server that holds two items whose ids differ only in letter case keeps one,
/// leaves the other alone, applies the rest, and says so: exit 12 and both ids named.
@Suite struct TodoItemIDCaseClashTests {
    init() throws {
        try #require(todo.isBuilt, "build the todo product first (scripts/test does)")
    }

    static let page = """
        [{"id":"dup","text":"lower","complete":false,"version":"1","updatedAt":"2026-01-01T00:00:01.000Z","deleted":false},
         {"id":"DUP","text":"upper","complete":false,"version":"1","updatedAt":"2026-01-01T00:00:02.000Z","deleted":false},
         {"id":"other","text":"plain","complete":false,"version":"1","updatedAt":"2026-01-01T00:00:03.000Z","deleted":false}]
        """

    @Test(arguments: ["pull", "sync"])
    func aPullThatMeetsTwoIdsFoldedToOneExitsTwelveNamingBoth(_ command: String) async throws {
        let server = try ScriptedTablesServer(foreignTables(items: Self.page))
        defer { server.stop() }
        let device = try Device()
        defer { device.directory.remove() }
        let pulled = try await device.run([command], server: server.url)
        #expect(pulled.exitCode == 12, "\(pulled)")
        #expect(
            pulled.errorLines == [
                "todo: The server has items whose ids differ only in letter case ('dup' here, 'DUP' on the server). todo keeps "
                    + "one item per id whatever its case, so it left the server's one alone (not merged, not changed) and pulled "
                    + "the rest. Rename or delete one of them on the server, then pull again."
            ], "\(pulled)")
        let items = try await device.items()
        #expect(Set(items.compactMap { $0["text"]?.stringValue }) == ["lower", "plain"], "\(items)")
        #expect(server.requests.allSatisfy { !$0.hasPrefix("PATCH") && !$0.hasPrefix("POST") && !$0.hasPrefix("DELETE") })
    }
}
