import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A backend that compares ids exactly holds `dup` and `DUP` as two items. The client folds ids
/// (one local row per folded id), so it keeps one and leaves the other alone: never merged,
/// reported as a typed error naming both ids, the rest of the pull applied and its token saved.
@Suite struct ItemIDCaseClashTests {
    static let clash = ItemIDCaseClash(table: "todo", localId: "dup", serverId: "DUP")

    /// `dup` and `DUP`, two items of a backend that compares ids exactly, and one more.
    static func putBothSpellings(_ backend: NodeLikeBackend) {
        backend.put("dup", "lower")
        backend.put("DUP", "upper")
        backend.put("other", "applied")
    }

    static func page(_ items: [JSONObject]) throws -> SyncResponse {
        SyncResponse(statusCode: 200, body: try JSONCoding.encode(JSONValue.array(items.map(JSONValue.object))))
    }

    /// The next page (empty) and the read of `id`'s spelling are sent side by side, in either
    /// order: each of the two scripted answers looks at its request.
    static func enqueueNextPageAndRead(of id: String, _ f: ClientFixture, answer: SyncResponse) throws {
        let empty = try page([])
        for _ in 0..<2 {
            f.transport.enqueue { request in request.queryValue("$filter") == "id eq '\(id)'" ? answer : empty }
        }
    }

    /// Before, `DUP`'s text overwrote `dup`'s row, and the edit of "dup" went out with `DUP`'s
    /// values and version.
    @Test(arguments: StoreKind.allCases)
    func twoSpellingsInOnePageAreNotMerged(kind: StoreKind) async throws {
        try await withNodeLikeClient(kind) { n in
            Self.putBothSpellings(n.backend)
            let error = try await #require(throws: SyncError.self) { try await n.table().pull() }
            #expect(error == .itemIDCaseClash)
            #expect(error.itemIDCaseClashes == [Self.clash])
            #expect(try await n.context.itemIDCaseClashes() == [Self.clash])
            #expect(try await n.rows().map { [$0["id"], $0["text"]] } == [["dup", "lower"], ["other", "applied"]])

            // A local edit of "dup" goes to dup, over dup's version; DUP is untouched.
            try await n.table().update(todo("dup", "edited", version: "1"))
            try await n.context.push()
            #expect(n.lines.last == "PATCH /app/tables/todo/dup")
            #expect(n.backend.requests.last?.header("If-Match") == "\"1\"")
            #expect(n.backend.item("dup")?.values["text"] == "edited")
            #expect(n.backend.item("DUP")?.values["text"] == "upper")
            #expect(n.backend.item("DUP")?.version == 1)
            #expect(n.backend.requests.allSatisfy { !$0.url.path.hasSuffix("/DUP") }, "no request names DUP")
        }
    }

    /// One item per page: the second spelling meets the row the first page wrote; a read of the
    /// row's spelling shows the server has both. The pages after it are applied.
    @Test(arguments: StoreKind.allCases)
    func twoSpellingsOnTwoPagesAreNotMerged(kind: StoreKind) async throws {
        try await withNodeLikeClient(kind) { n in
            Self.putBothSpellings(n.backend)
            let error = try await #require(throws: SyncError.self) { try await n.table().pull(pageSize: 1) }
            #expect(error.itemIDCaseClashes == [Self.clash])
            #expect(n.backend.requests.contains { $0.queryValue("$filter") == "id eq 'dup'" })
            #expect(try await n.rows().map { [$0["id"], $0["text"]] } == [["dup", "lower"], ["other", "applied"]])
        }
    }

    /// The local row came from an earlier pull; an incremental pull brings only `DUP`. Its token
    /// moves past `DUP` and the rest of the page is applied. When `DUP` is deleted on the server,
    /// the clash ends and `dup`'s row stays (before, the delete of `DUP` deleted it).
    @Test(arguments: StoreKind.allCases)
    func aSpellingOtherThanTheStoredOneIsNotMerged(kind: StoreKind) async throws {
        try await withNodeLikeClient(kind) { n in
            n.backend.put("dup", "lower")
            n.backend.put("x", "first")
            try await n.table().pull(queryId: "all")
            n.backend.put("DUP", "upper")
            n.backend.put("y", "second")
            let error = try await #require(throws: SyncError.self) { try await n.table().pull(queryId: "all") }
            #expect(error.itemIDCaseClashes == [Self.clash])
            #expect(try await n.rows().map { [$0["id"], $0["text"]] } == [["dup", "lower"], ["x", "first"], ["y", "second"]])
            let token = try await n.store.read { try $0.configValue(forKey: "deltaToken|todo|all") }
            #expect(token == "2001-09-09T01:46:40.004Z", "the token moved past DUP and y")

            n.backend.put("DUP", "upper", deleted: true)
            try await n.table().pull(queryId: "all")
            #expect(try await n.context.itemIDCaseClashes().isEmpty, "the clash ended")
            #expect(try await n.rows().map { $0["id"] } == ["dup", "x", "y"], "dup's row stays")
        }
    }

    /// A server that folds case (ours, SQL Server) spells the item its own way: the read of the
    /// row's spelling finds that item, so the pulled item is the row's and is applied to it.
    @Test(arguments: StoreKind.allCases)
    func aFoldingServersOtherSpellingIsTheSameItem(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("one", "before", version: "1")])
            f.transport.enqueuePage([serverItem("ONE", "changed")])
            try Self.enqueueNextPageAndRead(of: "one", f, answer: Self.page([serverItem("ONE", "changed")]))
            #expect(try await f.table().pull() == 1)
            #expect(f.transport.requests.last?.queryValue("$filter") == "id eq 'one'")
            #expect(try await f.rows() == [["id": "one", "text": "changed", "version": "1", "updatedAt": "2001-01-01T00:00:00.000Z"]])
            #expect(try await f.context.itemIDCaseClashes().isEmpty)
        }
    }

    /// A backend that compares ids exactly and no longer has the row's spelling: the row is
    /// stale, and the pulled item replaces it under its own spelling (so an edit goes to it).
    @Test(arguments: StoreKind.allCases)
    func aRowWhoseSpellingIsGoneIsReplaced(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("dup", "stale", version: "1")])
            f.transport.enqueuePage([serverItem("DUP", "upper")])
            try Self.enqueueNextPageAndRead(of: "dup", f, answer: Self.page([]))
            #expect(try await f.table().pull() == 1)
            #expect(try await f.rows().map { [$0["id"], $0["text"]] } == [["DUP", "upper"]])
        }
    }

    /// The read of the row's spelling is refused: the pull stops without saving its token (the
    /// page is read again next time), and the row is untouched.
    @Test(arguments: StoreKind.allCases)
    func anUnansweredReadOfTheRowsSpellingStopsThePull(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("dup", "lower", version: "1")])
            f.transport.enqueuePage([serverItem("DUP", "upper", updatedAt: "2002-02-02T00:00:00.000Z")])
            try Self.enqueueNextPageAndRead(of: "dup", f, answer: SyncResponse(statusCode: 400, body: Data(#"{"error":"unsupported filter"}"#.utf8)))
            await #expect(throws: SyncError.requestFailed) { try await f.table().pull(queryId: "all") }
            #expect(try await f.config("deltaToken|todo|all") == nil)
            #expect(try await f.row("dup")?["text"] == "lower")
        }
    }
}
