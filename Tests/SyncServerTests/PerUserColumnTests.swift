import Foundation
import HTTPTypes
import SyncSQL
import SyncServer
import SyncWire
import Testing

/// Per-user tables reveal nothing of other users, not even the names of their properties: every
/// answer to a user carries only the columns that user wrote, under that user's spelling.
@Suite struct PerUserColumnTests {
    static let configuration = PerUserTableTests.configuration

    /// Bob's secret property, and one nobody ever wrote (of the same length).
    static let secret = "bobsMedicalCondition"
    static let nobodys = "zzzzMedicalCondition"

    /// Bob writes his secret, a `Mood` (text) and a `Diagnosis`; Alice writes her note `a`.
    static func seed(_ server: TestServer) async throws -> JSONObject {
        let bob = PerUserTableTests.headers("bob")
        let written = try await server.send(
            .post, "/tables/notes", object: ["id": "b1", secret: "flu", "Mood": "sad", "Diagnosis": "private"], headers: bob)
        try #require(written.status == .created)
        let alice = try await server.send(
            .post, "/tables/notes", object: ["id": "a", "text": "alice's"], headers: PerUserTableTests.headers("alice"))
        try #require(alice.status == .created)
        return alice.object
    }

    /// Whether an answer's body names anything only Bob wrote.
    static func leaks(_ reply: Reply) -> Bool {
        let body = String(decoding: reply.body, as: UTF8.self)
        return body.contains(secret) || body.contains("Mood") || body.contains("Diagnosis")
    }

    @Test(arguments: StorageFactory.all)
    func noItemBodyNamesAnotherUsersProperty(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            let created = try await Self.seed(server)
            #expect(created["text"] == "alice's" && created[Self.secret] == nil, "the insert's answer: \(created)")
            let alice = PerUserTableTests.headers("alice")
            let version = try #require(created["version"]?.stringValue)
            var replies: [(String, Reply)] = []
            replies.append(("GET", try await server.send(.get, "/tables/notes/a", headers: alice)))
            replies.append(("list", try await server.send(.get, "/tables/notes", headers: alice)))
            replies.append(("count", try await server.send(.get, "/tables/notes?$inlinecount=allpages&__includeDeleted=true", headers: alice)))
            replies.append(("409", try await server.send(.post, "/tables/notes", object: ["id": "A"], headers: alice)))
            replies.append(
                (
                    "412",
                    try await server.send(
                        .patch, "/tables/notes/a", object: ["text": "x"], headers: PerUserTableTests.headers("alice", ifMatch: "old"))
                ))
            replies.append(
                ("409 version", try await server.send(.patch, "/tables/notes/a", object: ["text": "x", "version": "old"], headers: alice)))
            replies.append(("PATCH", try await server.send(.patch, "/tables/notes/a", object: ["text": "edited"], headers: alice)))
            replies.append(("DELETE", try await server.send(.delete, "/tables/notes/a", headers: alice)))
            replies.append(("undelete", try await server.send(.post, "/tables/notes/a", headers: alice)))
            replies.append(
                (
                    "PATCH old",
                    try await server.send(
                        .patch, "/tables/notes/a", object: ["text": "y"], headers: PerUserTableTests.headers("alice", ifMatch: version))
                ))
            let expected: [HTTPResponse.Status] = [.ok, .ok, .ok, .conflict, .preconditionFailed, .conflict, .ok, .ok, .created, .preconditionFailed]
            #expect(replies.count == expected.count)
            for ((name, reply), status) in zip(replies, expected) {
                #expect(reply.status == status, "\(name): \(reply.status)")
                #expect(!Self.leaks(reply), "\(name) answered \(String(decoding: reply.body, as: UTF8.self))")
            }
            let item = replies[0].1.object
            #expect(Set(item.keys) == ["id", "createdAt", "updatedAt", "version", "deleted", "text"], "\(item)")

            // Bob still sees all of his own, under his spelling.
            let bobs = try await server.send(.get, "/tables/notes/b1", headers: PerUserTableTests.headers("bob")).object
            #expect(bobs[Self.secret] == "flu" && bobs["Mood"] == "sad" && bobs["Diagnosis"] == "private" && bobs["text"] == nil, "\(bobs)")
        }
    }

    @Test(arguments: StorageFactory.all)
    func aQueryOnAnotherUsersPropertyIsRefusedLikeOneOnAPropertyNobodyHas(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .all), storage: factory) { server in
            _ = try await Self.seed(server)
            let alice = PerUserTableTests.headers("alice")
            let templates = ["$select=NAME", "$select=text,NAME", "$filter=NAME eq null", "$filter=NAME ne 'flu'", "$orderby=NAME desc"]
            for template in templates {
                func answer(_ name: String) async throws -> String {
                    let query = template.replacingOccurrences(of: "NAME", with: name)
                    let (option, value) = (query.prefix { $0 != "=" }, query.drop { $0 != "=" }.dropFirst())
                    let reply = try await server.send(.get, "/tables/notes?\(option)=\(ODataQuery.encode(String(value)))", headers: alice)
                    return "\(reply.status.code) \(String(decoding: reply.body, as: UTF8.self))"
                        .replacingOccurrences(of: name, with: "NAME")
                }
                let secret = try await answer(Self.secret)
                #expect(secret == (try await answer(Self.nobodys)), "\(template)")
                #expect(secret.hasPrefix("400 "), "\(template): \(secret)")
            }
            // In a per-user table nobody wrote, an unknown column is refused the same way.
            let fresh = try await server.send(.get, "/tables/other?$select=\(Self.nobodys)", headers: alice)
            let known = try await server.send(.get, "/tables/notes?$select=\(Self.nobodys)", headers: alice)
            #expect(fresh.status == .badRequest && fresh.body == known.body)
        }
    }

    @Test(arguments: StorageFactory.all)
    func aUserSeesTheirOwnNullsAndSpellingsNeverAnotherUsers(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["notes"])), storage: factory) {
            server in
            _ = try await Self.seed(server)
            let alice = PerUserTableTests.headers("alice")
            // Alice names Bob's column in her own spelling: her answers use hers.
            let mine = try await server.send(.post, "/tables/notes", object: ["id": "a2", "diagnosis": "cold", "mood": nil], headers: alice)
            #expect(mine.status == .created && mine.object["diagnosis"] == "cold" && mine.object["mood"] == .null, "\(mine.object)")
            #expect(!Self.leaks(mine))
            // A value that does not fit a column only Bob wrote is named as Alice sent it.
            let misfit = try await server.send(.patch, "/tables/notes/a", object: ["mood": 5], headers: alice)
            #expect(misfit.status == .badRequest && !Self.leaks(misfit), "\(misfit.errorMessage ?? "")")
            // A property Alice set to null stays in her answers, as null.
            #expect(try await server.send(.patch, "/tables/notes/a2", object: ["diagnosis": nil], headers: alice).status == .ok)
            let listed = try await server.send(.get, "/tables/notes?$orderby=id", headers: alice)
            #expect(listed.array.map { $0["diagnosis"] } == [.null, .null] && listed.array.map { $0["mood"] } == [.null, .null])
            #expect(!Self.leaks(listed), "\(String(decoding: listed.body, as: UTF8.self))")
            let filtered = try await server.send(
                .get, "/tables/notes?$filter=" + ODataQuery.encode("diagnosis eq null and mood eq null"), headers: alice)
            #expect(filtered.array.count == 2 && !Self.leaks(filtered))
            // Bob's item is as he wrote it, his spelling kept.
            let bobs = try await server.send(.get, "/tables/notes/b1", headers: PerUserTableTests.headers("bob")).object
            #expect(bobs["Diagnosis"] == "private" && bobs["diagnosis"] == nil && bobs["Mood"] == "sad", "\(bobs)")
        }
    }

    @Test(arguments: StorageFactory.all)
    func batchResultsNameOnlyTheUsersOwnProperties(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            _ = try await Self.seed(server)
            let alice = PerUserTableTests.headers("alice")
            let operations: [JSONValue] = [
                .object(["method": "POST", "item": .object(["id": "n1", "text": "one"])]),
                .object(["method": "PATCH", "id": "a", "item": .object(["text": "two"])]),
                .object(["method": "POST", "item": .object(["id": "a", "text": "taken"])]),
                .object(["method": "DELETE", "id": "n1"]),
            ]
            let reply = try await server.send(.post, "/batch/notes", object: ["operations": .array(operations)], headers: alice)
            let results = reply.object["results"]?.arrayValue ?? []
            #expect(reply.status == .ok && results.compactMap { $0.objectValue?["status"] } == [201, 200, 409, 200])
            #expect(!Self.leaks(reply), "\(String(decoding: reply.body, as: UTF8.self))")
            // The API document is the same for everyone.
            #expect(!Self.leaks(try await server.send(.get, "/openapi.json", headers: alice)))
        }
    }

    /// A database whose per-user table was written before the server recorded each owner's
    /// columns: Bob's secret and Alice's `text` (and `done`, null in all her rows).
    static func written(before base: StorageFactory) -> StorageFactory {
        StorageFactory(description: base.description, maximumInstances: 1) {
            let database = try await base.makeDatabase()
            let storage = try await database.open(nil)
            _ = try await storage.ensureColumns("notes", scope: .owner("bob"), [secret: .text])
            _ = try await storage.insert(table: "notes", scope: .owner("bob"), item: ["id": "b1", secret: "flu"])
            _ = try await storage.ensureColumns("notes", scope: .owner("alice"), ["text": .text, "done": .boolean])
            _ = try await storage.insert(table: "notes", scope: .owner("alice"), item: ["id": "a", "text": "mine", "done": .null])
            try await storage.close()
            return database
        }
    }

    @Test(arguments: [StorageFactory.sqliteFile, .postgres].map(written(before:)))
    func aTableWrittenBeforeTheRecordShowsEachOwnerTheColumnsTheirRowsHold(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            let alice = PerUserTableTests.headers("alice")
            let item = try await server.send(.get, "/tables/notes/a", headers: alice)
            #expect(item.object["text"] == "mine" && !Self.leaks(item), "\(item.object)")
            let filtered = try await server.send(.get, "/tables/notes?$filter=" + ODataQuery.encode("text eq 'mine'"), headers: alice)
            #expect(filtered.array.map { $0["id"] } == ["a"])
            let secret = try await server.send(.get, "/tables/notes?$select=\(Self.secret)", headers: alice)
            let nobodys = try await server.send(.get, "/tables/notes?$select=\(Self.nobodys)", headers: alice)
            #expect(
                secret.status == .badRequest && secret.errorMessage?.replacingOccurrences(of: Self.secret, with: Self.nobodys) == nobodys.errorMessage
            )
            // Once Alice writes `done`, it is hers: shown, null or not.
            #expect(try await server.send(.patch, "/tables/notes/a", object: ["done": .null], headers: alice).object["done"] == .null)
            let bobs = try await server.send(.get, "/tables/notes/b1", headers: PerUserTableTests.headers("bob")).object
            #expect(bobs[Self.secret] == "flu" && bobs["text"] == nil && bobs["done"] == nil, "\(bobs)")
        }
    }

    /// The table of the names each owner wrote, as a server killed between creating it and adding
    /// its columns left it (found by the chaos suite: every request to a per-user table was then
    /// refused with "unknown column 'table'"): requests are answered, and the first write adds the
    /// columns.
    @Test(arguments: StorageFactory.all)
    func aNamesTableLeftWithoutItsColumnsIsMendedNotRefused(_ factory: StorageFactory) async throws {
        let damaged = StorageFactory(description: factory.description, maximumInstances: 1) {
            let database = try await factory.makeDatabase()
            return TestDatabase(
                open: { observer in
                    let storage = try await database.open(observer)
                    let records = try await storage.ensureColumns("__ciphersync_columns", scope: .owner("carol"), [:])
                    try #require(records.columns["table"] == nil, "the names table starts without its columns")
                    return storage
                },
                remove: database.remove)
        }
        try await TestServer.run(Self.configuration, storage: damaged) { server in
            let alice = PerUserTableTests.headers("alice")
            let before = try await server.send(.get, "/tables/notes", headers: alice)
            #expect(before.status == .ok, "\(before.status): \(String(decoding: before.body, as: UTF8.self))")
            _ = try await Self.seed(server)
            let list = try await server.send(.get, "/tables/notes", headers: alice)
            #expect(list.status == .ok)
            #expect(list.array.map { $0["id"] } == ["a"] && !Self.leaks(list), "\(String(decoding: list.body, as: UTF8.self))")
            let bobs = try await server.send(.get, "/tables/notes/b1", headers: PerUserTableTests.headers("bob")).object
            #expect(bobs[Self.secret] == "flu" && bobs["Mood"] == "sad", "\(bobs)")
            let refused = try await server.send(.get, "/tables/notes?$filter=Mood%20eq%20'sad'", headers: alice)
            #expect(refused.status == .badRequest && refused.errorMessage == "unknown column 'Mood'", "\(refused.status)")
        }
    }
}
