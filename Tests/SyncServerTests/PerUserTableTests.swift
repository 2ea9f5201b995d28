import Foundation
import HTTPTypes
import SyncSQL
import SyncServer
import SyncWire
import Testing

/// Per-user tables: each row belongs to the identity that inserted it; another user can neither
/// reach it nor learn that it exists.
@Suite struct PerUserTableTests {
    static let configuration = ServerConfiguration.testing(
        authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["Notes"]))

    static func headers(_ user: String, ifMatch: String? = nil) -> HTTPFields {
        var fields = TestIdentityVerifier.headers(user)
        if let ifMatch { fields[.ifMatch] = ETag.quote(ifMatch) }
        return fields
    }

    /// Alice's notes: `a` (live) and `b` (deleted); Bob's note `c`.
    static func seed(_ server: TestServer) async throws -> (a: JSONObject, b: JSONObject) {
        let alice = headers("alice")
        let a = try await server.send(.post, "/tables/notes", object: ["id": "a", "text": "alice's secret"], headers: alice)
        let b = try await server.send(.post, "/tables/notes", object: ["id": "b", "text": "alice's old"], headers: alice)
        try #require(a.status == .created && b.status == .created)
        let deleted = try await server.send(.delete, "/tables/notes/b", headers: alice)
        try #require(deleted.status == .ok)
        try #require(try await server.send(.post, "/tables/notes", object: ["id": "c", "text": "bob's"], headers: headers("bob")).status == .created)
        return (a.object, deleted.object)
    }

    @Test(arguments: StorageFactory.all)
    func anotherUsersItemIsAnswered404ExactlyLikeAMissingOne(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            let (a, b) = try await Self.seed(server)
            let bob = Self.headers("bob")
            for (suffix, ifMatch) in [("", nil), ("?__includeDeleted=true", nil), ("", a["version"]?.stringValue), ("", "*")] {
                var answers: [String: [String]] = [:]
                for id in ["a", "A", "b", "never"] {
                    let headers = Self.headers("bob", ifMatch: ifMatch)
                    var replies: [Reply] = []
                    if ifMatch == nil { replies.append(try await server.send(.get, "/tables/notes/\(id)\(suffix)", headers: headers)) }
                    replies.append(
                        try await server.send(.patch, "/tables/notes/\(id)\(suffix)", object: ["text": "bob was here", "extra": 1], headers: headers))
                    replies.append(try await server.send(.delete, "/tables/notes/\(id)\(suffix)", headers: headers))
                    replies.append(try await server.send(.post, "/tables/notes/\(id)\(suffix)", json: "", headers: headers))
                    answers[id] = replies.map { "\($0.status.code) \(String(decoding: $0.body, as: UTF8.self)) \($0.eTag ?? "")" }
                }
                #expect(answers["never"]?.allSatisfy { $0.hasPrefix("404 ") } == true, "\(answers["never"] ?? [])")
                for id in ["a", "A", "b"] { #expect(answers[id] == answers["never"], "\(id)\(suffix) If-Match \(ifMatch ?? "none")") }
            }

            for query in ["", "?__includeDeleted=true", "?$filter=" + ODataQuery.encode("id eq 'a' or id eq 'b' or text ne 'x'")] {
                let listed = try await server.send(.get, "/tables/notes\(query)", headers: bob)
                #expect(listed.status == .ok && listed.array.map { $0["id"] } == ["c"], "\(query)")
            }
            let counted = try await server.send(.get, "/tables/notes?$inlinecount=allpages&__includeDeleted=true", headers: bob).object
            #expect(counted["count"] == 1)
            let filtered = try await server.send(.get, "/tables/notes?$inlinecount=allpages&$filter=" + ODataQuery.encode("id eq 'A'"), headers: bob)
                .object
            #expect(filtered["count"] == 0 && filtered["results"] == [])

            // Alice's items are as they were, and the refused PATCHes added no column.
            let alice = Self.headers("alice")
            #expect(try await server.send(.get, "/tables/notes/a", headers: alice).object == a)
            #expect(try await server.send(.get, "/tables/notes/b?__includeDeleted=true", headers: alice).object == b)
            #expect(try await server.send(.get, "/tables/notes?$select=extra", headers: alice).status == .badRequest)
        }
    }

    @Test(arguments: StorageFactory.all)
    func twoUsersEachHaveTheirOwnItemOfOneID(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            let (a, b) = try await Self.seed(server)
            let bob = Self.headers("bob")
            // Bob's insert of Alice's ids creates Bob's own items: never a 409 with hers.
            let mine = try await server.send(.post, "/tables/notes", object: ["id": "a", "text": "bob's a"], headers: bob)
            #expect(mine.status == .created && mine.object["text"] == "bob's a")
            let other = try await server.send(.post, "/tables/notes", object: ["id": "B", "text": "bob's B"], headers: bob)
            #expect(other.status == .created && other.object["id"] == "B" && other.object["deleted"] == false)
            #expect(
                try await server.send(.post, "/tables/notes", object: ["id": "A"], headers: bob).status == .conflict, "his own a, in another case")

            #expect(try await server.send(.patch, "/tables/notes/a", object: ["text": "bob's a, edited"], headers: bob).status == .ok)
            #expect(try await server.send(.delete, "/tables/notes/B", headers: bob).status == .ok)

            let alice = Self.headers("alice")
            #expect(try await server.send(.get, "/tables/notes/a", headers: alice).object == a)
            #expect(try await server.send(.get, "/tables/notes/b?__includeDeleted=true", headers: alice).object == b)
            let bobs = try await server.send(.get, "/tables/notes?__includeDeleted=true&$orderby=id", headers: bob).array
            #expect(bobs.map { $0["id"] } == ["a", "B", "c"] && bobs[0]["text"] == "bob's a, edited")
            let alices = try await server.send(.get, "/tables/notes?__includeDeleted=true&$orderby=id", headers: alice).array
            #expect(alices.map { $0["text"] } == ["alice's secret", "alice's old"])
        }
    }

    @Test(arguments: StorageFactory.all)
    func theOwnerIsNeverShownNorSettableNorNameable(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration, storage: factory) { server in
            _ = try await Self.seed(server)
            let bob = Self.headers("bob")
            let listed = try await server.send(.get, "/tables/notes?__includeDeleted=true", headers: bob)
            #expect(!String(decoding: listed.body, as: UTF8.self).contains("owner"))
            #expect(try await server.send(.post, "/tables/notes", object: ["id": "x", "$owner": "alice"], headers: bob).status == .badRequest)
            for query in [
                "$select=" + ODataQuery.encode("$owner"), "$filter=" + ODataQuery.encode("$owner eq 'alice'"),
                "$orderby=" + ODataQuery.encode("$owner"),
            ] {
                #expect(try await server.send(.get, "/tables/notes?\(query)", headers: bob).status == .badRequest, "\(query)")
            }
            #expect(try await server.send(.get, "/tables/notes/x", headers: bob).status == .notFound)
        }
    }

    @Test(arguments: StorageFactory.all)
    func aPerUserTableNeedsAnIdentity(_ factory: StorageFactory) async throws {
        let token = UUID().uuidString
        let modes: [Authentication] = [.none, .sharedToken(token), .verifier(TestIdentityVerifier())]
        for authentication in modes {
            try await TestServer.run(.testing(authentication: authentication, perUserTables: .all), storage: factory) { server in
                var headers = TestServer.version
                if case .sharedToken = authentication, let name = HTTPField.Name(WireHeader.auth) { headers[name] = token }
                let requests: [(HTTPRequest.Method, String, String?)] = [
                    (.get, "/tables/todo", nil), (.post, "/tables/todo", #"{"id": "1"}"#), (.get, "/tables/todo/1", nil),
                    (.patch, "/tables/todo/1", #"{"text": "x"}"#), (.delete, "/tables/todo/1", nil), (.post, "/tables/todo/1", nil),
                ]
                for (method, uri, body) in requests {
                    let reply = try await server.send(method, uri, json: body, headers: headers)
                    #expect(reply.status == .unauthorized && reply.errorMessage == "Unauthorized", "\(method) \(uri)")
                }
            }
        }
        // A per-user table that nobody wrote lists as empty: whether it exists is other users' business.
        try await TestServer.run(Self.configuration, storage: factory) { server in
            let perUser = try await server.send(.get, "/tables/notes", headers: Self.headers("carol"))
            #expect(perUser.status == .ok && perUser.array.isEmpty)
            let shared = try await server.send(.get, "/tables/other", headers: Self.headers("carol"))
            #expect(shared.status == .notFound, "a shared table")
        }
    }

    @Test(arguments: StorageFactory.all)
    func aTableStoredAsTheOtherKindStopsTheServerFromStarting(_ factory: StorageFactory) async throws {
        let database = try await factory.makeDatabase()
        let storage = try await database.open(nil)
        _ = try await storage.ensureColumns("notes", scope: .shared, ["text": .text])
        _ = try await storage.ensureColumns("todo", scope: .owner("alice"), ["text": .text])
        for perUser in [PerUserTables.named(["notes", "todo"]), .none, .all] {
            do {
                _ = try await buildApplication(.testing(perUserTables: perUser), storage: storage)
                Issue.record("a server started over a table of the other kind")
            } catch let error as TableStorageError {
                #expect(error == .scopeMismatch && error.table == (perUser == .none ? "todo" : "notes"))
                #expect("\(error)".contains(perUser == .none ? "'todo'" : "'notes'"))
            }
        }
        _ = try await buildApplication(.testing(perUserTables: .named(["TODO"])), storage: storage)
        try await storage.close()
        try await database.remove()
    }
}
