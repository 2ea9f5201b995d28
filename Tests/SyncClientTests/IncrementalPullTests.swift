import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Incremental pull by query id (docs/protocol.md §1.5.4): cases 35, 37, 38, 41, 45.
@Suite struct IncrementalPullTests {
    static func query(_ request: SyncRequest) -> [String: String] {
        Dictionary(request.queryItems.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    static func since(_ token: String) -> String { "updatedAt ge datetimeoffset'\(token)'" }

    static let tokenKey = "deltaToken|todo|test_1"

    // Case 35
    @Test(arguments: StoreKind.allCases)
    func eachPageRaisesTheTokenAndTheNextPullStartsFromIt(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            f.transport.enqueuePage([
                serverItem("a", "1", updatedAt: "1999-12-03T15:44:29Z"), serverItem("b", "2", updatedAt: "1999-12-01T00:00:00Z"),
            ])
            f.transport.enqueuePage([serverItem("c", "3", updatedAt: "1999-12-04T16:44:59Z")])
            f.transport.enqueuePage([])
            try await table.pull(queryId: "test_1", pageSize: 50)
            let expected = ["1970-01-01T00:00:00.000Z", "1999-12-03T15:44:29.000Z", "1999-12-04T16:44:59.000Z"]
            #expect(f.transport.requests.map { Self.query($0)["$filter"] } == expected.map(Self.since))
            for request in f.transport.requests {
                let q = Self.query(request)
                #expect(q["$orderby"] == "updatedAt asc" && q["$skip"] == "0" && q["$top"] == "50")
                #expect(q["__includeDeleted"] == "true")
                #expect(request.header("X-ZUMO-FEATURES") == "TQ,OL,IP")
            }
            #expect(try await f.config(Self.tokenKey) == "1999-12-04T16:44:59.000Z")
            #expect(try await f.rows().count == 3)
            // a second pull starts from the saved token
            f.transport.enqueuePage([])
            try await table.pull(queryId: "test_1")
            let last = try #require(f.transport.requests.last)
            #expect(Self.query(last)["$filter"] == Self.since("1999-12-04T16:44:59.000Z"))
        }
    }

    // Case 37
    @Test(arguments: StoreKind.allCases)
    func theUserFilterIsCombinedWithTheToken(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([])
            try await f.table().pull(Query().where(Field("text") == "MATCH"), queryId: "test_1")
            let first = try #require(f.transport.requests.first)
            let filter = try #require(Self.query(first)["$filter"])
            #expect(filter == "(text eq 'MATCH') and (updatedAt ge datetimeoffset'1970-01-01T00:00:00.000Z')")
            let parsed = try ODataParser.parseFilter(filter)
            #expect(
                parsed
                    == .binary(
                        .and, .binary(.eq, .member("text"), .literal(.string("MATCH"))),
                        .binary(.ge, .member("updatedAt"), .literal(.date(Date(timeIntervalSince1970: 0))))))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func pagesSharingTheTokensTimestampAdvanceBySkip(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let same = "2005-05-05T05:05:05.555Z"
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: same), serverItem("b", "2", updatedAt: same)])
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: same), serverItem("b", "2", updatedAt: same)])
            f.transport.enqueuePage([serverItem("c", "3", updatedAt: same)])
            f.transport.enqueuePage([])
            try await f.table().pull(queryId: "test_1")
            let requests = f.transport.requests.map(Self.query)
            #expect(requests.map { $0["$skip"] } == ["0", "0", "2", "3"])
            #expect(requests.map { $0["$filter"] } == [Self.since("1970-01-01T00:00:00.000Z")] + Array(repeating: Self.since(same), count: 3))
            #expect(try await f.config(Self.tokenKey) == same)
        }
    }

    /// G2 pages on by `$skip` past the rows at the token. When one of them is written again
    /// between two requests it leaves its place, and the skip passes over another row: a page read
    /// with `$skip` that would move the token is set aside and the pull reads again from the same
    /// token with `$skip=0` (here `a`, written just before `b` moved, is read there).
    @Test(arguments: StoreKind.allCases)
    func aRowAtTheTokenWrittenAgainSendsThePullBackToTheToken(kind: StoreKind) async throws {
        try await withClient(kind) { f async throws in
            let t1 = "2001-01-01T00:00:01.000Z", t2 = "2001-01-01T00:00:02.000Z"
            let t3 = "2001-01-01T00:00:03.000Z", t4 = "2001-01-01T00:00:04.000Z"
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: t1), serverItem("b", "1", updatedAt: t2)])
            f.transport.enqueuePage([serverItem("b", "1", updatedAt: t2)])
            // a, then b, written again: `ge t2` is now [a@t3, b@t4], and `$skip=1` passes over a.
            f.transport.enqueuePage([serverItem("b", "2", updatedAt: t4)])
            f.transport.enqueuePage([serverItem("a", "2", updatedAt: t3), serverItem("b", "2", updatedAt: t4)])
            f.transport.enqueuePage([serverItem("b", "2", updatedAt: t4)])
            f.transport.enqueuePage([])
            #expect(try await f.table().pull(queryId: "test_1") == 4, "a and b, then their new versions; the page set aside is not counted")
            let requests = f.transport.requests.map(Self.query)
            #expect(requests.map { $0["$skip"] } == ["0", "0", "1", "0", "0", "1"])
            let since = ["1970-01-01T00:00:00.000Z", t2, t2, t2, t4, t4].map(Self.since)
            #expect(requests.map { $0["$filter"] } == since)
            #expect(try await f.row("a")?["text"] == "2")
            #expect(try await f.config(Self.tokenKey) == t4)
        }
    }

    /// When the rows at the token fill a page of the server (a timestamp shared by many rows),
    /// reading again from the token would meet the same page: the page after the skip is taken
    /// as G2 takes it.
    @Test(arguments: StoreKind.allCases)
    func whenTheTokensRowsFillAPageTheSkipIsTrusted(kind: StoreKind) async throws {
        try await withClient(kind) { f async throws in
            let same = "2001-01-01T00:00:02.000Z", t3 = "2001-01-01T00:00:03.000Z"
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: same), serverItem("b", "1", updatedAt: same)])
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: same), serverItem("b", "1", updatedAt: same)])
            f.transport.enqueuePage([serverItem("c", "1", updatedAt: t3)])
            f.transport.enqueuePage([serverItem("c", "1", updatedAt: t3)])
            f.transport.enqueuePage([])
            #expect(try await f.table().pull(queryId: "test_1") == 3)
            let requests = f.transport.requests.map(Self.query)
            #expect(requests.map { $0["$skip"] } == ["0", "0", "2", "0", "1"])
            #expect(requests.map { $0["$filter"] } == ["1970-01-01T00:00:00.000Z", same, same, t3, t3].map(Self.since))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func subMillisecondTimestampsAreTruncatedNotRoundedUp(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: "2010-01-01T00:00:00.9996+00:00")])
            f.transport.enqueuePage([])
            try await f.table().pull(queryId: "test_1")
            #expect(try await f.config(Self.tokenKey) == "2010-01-01T00:00:00.999Z")
            #expect(Self.query(f.transport.requests[1])["$filter"] == Self.since("2010-01-01T00:00:00.999Z"))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletedAndSkippedItemsStillMoveTheToken(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([serverItem("gone", "x", updatedAt: "2003-03-03T03:03:03.333Z", deleted: true)])
            f.transport.enqueuePage([])
            try await f.table().pull(queryId: "test_1")
            #expect(try await f.config(Self.tokenKey) == "2003-03-03T03:03:03.333Z")
        }
    }

    // Case 38
    static let badQueries: [Query] = [
        Query().orderBy("text"), Query().top(10), Query().skip(5), Query().parameter("__includeDeleted", "false"),
        Query().parameter("__INCLUDEDELETED", "true"), Query().select("text"), Query().includingTotalCount(),
        Query().parameter("$top", "3"),
    ]

    @Test(arguments: StoreKind.allCases, badQueries.indices)
    func invalidIncrementalQueriesFailBeforeAnyRequest(kind: StoreKind, index: Int) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "pending"))
            await #expect(throws: SyncError.invalidPullQuery) { try await f.table().pull(Self.badQueries[index], queryId: "test_1") }
            #expect(f.transport.requests.isEmpty)
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func orderingAndPagingAreFineWithoutAQueryId(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([])
            try await f.table().pull(Query().orderBy("text").skip(5).top(10))
            let first = try #require(f.transport.requests.first)
            let q = Self.query(first)
            #expect(q["$orderby"] == "text asc" && q["$skip"] == "5" && q["$top"] == "10")
        }
    }

    // Case 41
    @Test(arguments: StoreKind.allCases)
    func aTokenReadFailureAbortsBeforeAnyRequest(kind: StoreKind) async throws {
        try await withClient(kind, spied: true) { f in
            try #require(f.spy).set(.configRead)
            let error = await #expect(throws: SyncError.self) { try await f.table().pull(queryId: "q") }
            #expect(error == .localStoreFailed)
            #expect(f.transport.requests.isEmpty)
        }
    }

    // Case 45
    static let badQueryIds = ["2as|df", String(repeating: "q", count: 256), "", "   ", "tab\tid"]

    @Test(arguments: StoreKind.allCases, badQueryIds)
    func invalidQueryIdsAreRefusedByPullAndPurge(kind: StoreKind, queryId: String) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "kept")])
            await #expect(throws: SyncError.invalidQueryID) { try await f.table().pull(queryId: queryId) }
            await #expect(throws: SyncError.invalidQueryID) { try await f.table().purge(queryId: queryId) }
            #expect(f.transport.requests.isEmpty)
            #expect(try await f.rows().count == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aQueryIdOf255CharactersIsAccepted(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let id = String(repeating: "q", count: 255)
            f.transport.enqueuePage([serverItem("a", "x", updatedAt: "2001-01-01T00:00:00.000Z")])
            f.transport.enqueuePage([])
            try await f.table().pull(queryId: id)
            #expect(try await f.config("deltaToken|todo|\(id)") == "2001-01-01T00:00:00.000Z")
        }
    }
}
