import Foundation
import SyncSQL
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Reads with a query on the local store, through the shared SQL translator, on SQLite 3.15.
@Suite struct StoreQueryTests {
    static let rows: [JSONObject] = [
        ["id": "a", "text": "Buy milk", "complete": false, "priority": 2, "price": 1.5, "due": "2026-01-15T08:30:00.000Z"],
        ["id": "b", "text": "buy bread", "complete": true, "priority": 1, "price": 2.25, "due": "2025-12-31T23:59:59.999Z"],
        ["id": "c", "text": "Call Bob", "complete": false, "priority": 3, "price": -1.5, "due": nil],
        ["id": "d", "text": "Fix the bike", "complete": true, "priority": 2, "price": 10, "due": "2026-03-01T12:00:00.000Z"],
    ]

    func filled(_ kind: StoreKind) async throws -> (TestStore, SQLiteStore) {
        let (test, store) = try await TestStore.make(kind)
        try await store.upsert(table: "todo", items: Self.rows)
        return (test, store)
    }

    func ids(_ store: SQLiteStore, _ filter: FilterExpression?, order: [OrderBy] = [OrderBy("id")]) async throws -> [String] {
        try await store.read(QueryDescription(table: "todo", filter: filter, orderBy: order)).items.compactMap { $0["id"]?.stringValue }
    }

    static let m = FilterExpression.member
    static func s(_ text: String) -> FilterExpression { .literal(.string(text)) }
    static func i(_ n: Int64) -> FilterExpression { .literal(.int(n)) }

    static let cases: [(String, FilterExpression, [String])] = [
        ("complete eq false", .binary(.eq, m("complete"), .literal(.bool(false))), ["a", "c"]),
        ("priority ge 2 and not complete", .binary(.and, .binary(.ge, m("priority"), i(2)), .unary(.not, m("complete"))), ["a", "c"]),
        ("due eq null", .binary(.eq, m("due"), .literal(.null)), ["c"]),
        ("due ne null", .binary(.ne, m("due"), .literal(.null)), ["a", "b", "d"]),
        ("startswith(tolower(text), 'buy')", .function(.startswith, [.function(.tolower, [m("text")]), s("buy")]), ["a", "b"]),
        ("endswith(text, 'BIKE') (case-insensitive)", .function(.endswith, [m("text"), s("BIKE")]), ["d"]),
        ("substringof('bo', text)", .function(.substringof, [s("bo"), m("text")]), ["c"]),
        ("indexof(text, 'milk') eq 4", .binary(.eq, .function(.indexof, [m("text"), s("milk")]), i(4)), ["a"]),
        ("substring(text, 4, 4) eq 'milk'", .binary(.eq, .function(.substring, [m("text"), i(4), i(4)]), s("milk")), ["a"]),
        (
            "length(trim(concat(text, '  '))) eq 8",
            .binary(.eq, .function(.length, [.function(.trim, [.function(.concat, [m("text"), s("  ")])])]), i(8)), ["a", "c"]
        ),
        ("year(due) eq 2026", .binary(.eq, .function(.year, [m("due")]), i(2026)), ["a", "d"]),
        (
            "month(due) eq 12 and second(due) eq 59",
            .binary(.and, .binary(.eq, .function(.month, [m("due")]), i(12)), .binary(.eq, .function(.second, [m("due")]), i(59))), ["b"]
        ),
        ("floor(price) eq -2", .binary(.eq, .function(.floor, [m("price")]), i(-2)), ["c"]),
        ("ceiling(price) eq 3", .binary(.eq, .function(.ceiling, [m("price")]), i(3)), ["b"]),
        ("round(price) eq 2", .binary(.eq, .function(.round, [m("price")]), .literal(.double(2))), ["a", "b"]),
        ("round(price) eq -2 (half away from zero)", .binary(.eq, .function(.round, [m("price")]), .literal(.double(-2))), ["c"]),
        ("priority mul 2 sub 1 eq 3", .binary(.eq, .binary(.sub, .binary(.mul, m("priority"), i(2)), i(1)), i(3)), ["a", "d"]),
        ("due gt datetimeoffset'2026-02-01'", .binary(.gt, m("due"), .literal(.date(Date(timeIntervalSince1970: 1_769_904_000)))), ["d"]),
    ]

    @Test(arguments: StoreKind.allCases)
    func filtersMatchTheExpectedRows(_ kind: StoreKind) async throws {
        let (test, store) = try await filled(kind)
        defer { test.directory.remove() }
        for (name, filter, expected) in Self.cases {
            #expect(try await ids(store, filter) == expected, "\(name)")
        }
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func orderTopSkipSelectionAndCount(_ kind: StoreKind) async throws {
        let (test, store) = try await filled(kind)
        defer { test.directory.remove() }
        let query = QueryDescription(
            table: "todo", filter: .binary(.ne, Self.m("id"), Self.s("zzz")),
            orderBy: [OrderBy("priority", ascending: false), OrderBy("text")], top: 2, skip: 1,
            selection: ["id", "priority"], includeTotalCount: true)
        let result = try await store.read(query)
        #expect(result.items == [["id": "a", "priority": 2], ["id": "d", "priority": 2]])
        #expect(result.totalCount == 4)
        let onlySkip = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")], skip: 3))
        #expect(onlySkip.items.map { $0["id"] } == ["d"])
        #expect(onlySkip.totalCount == nil)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func deleteByQueryRemovesOnlyMatches(_ kind: StoreKind) async throws {
        let (test, store) = try await filled(kind)
        defer { test.directory.remove() }
        try await store.delete(QueryDescription(table: "todo", filter: .binary(.eq, Self.m("complete"), .literal(.bool(true)))))
        #expect(try await ids(store, nil) == ["a", "c"])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func unknownColumnsAndHostileNamesAreRefused(_ kind: StoreKind) async throws {
        let (test, store) = try await filled(kind)
        defer { test.directory.remove() }
        let bad: [QueryDescription] = [
            QueryDescription(table: "todo", filter: .binary(.eq, Self.m("missing"), Self.i(1))),
            QueryDescription(table: "todo", orderBy: [OrderBy("text\" DESC; DROP TABLE todo; --")]),
            QueryDescription(table: "todo", selection: ["id", "nope"]),
            QueryDescription(table: "todo", top: -1),
        ]
        for query in bad {
            await #expect(throws: StoreError.self) { try await store.read(query) }
        }
        let injection = FilterExpression.binary(.eq, Self.m("text"), Self.s("x' OR 1=1 --"))
        #expect(try await ids(store, injection) == [])
        #expect(try await ids(store, nil).count == 4)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func memberNamesFindTheirColumnWhateverTheASCIICase(_ kind: StoreKind) async throws {
        let (test, store) = try await filled(kind)
        defer { test.directory.remove() }
        let byText = FilterExpression.binary(.eq, Self.m("TEXT"), Self.s("Buy milk"))
        #expect(try await ids(store, byText) == ["a"])
        let order = [OrderBy("Priority", ascending: false), OrderBy("ID")]
        #expect(try await ids(store, .binary(.eq, Self.m("Complete"), .literal(.bool(false))), order: order) == ["c", "a"])
        // The selection comes back under the columns' own spellings, typed by their columns.
        let selected = try await store.read(
            QueryDescription(
                table: "todo", filter: .function(.startswith, [Self.m("Text"), Self.s("buy")]), orderBy: [OrderBy("Id")],
                selection: ["ID", "Complete"], includeTotalCount: true))
        #expect(selected.items == [["id": "a", "complete": false], ["id": "b", "complete": true]])
        #expect(selected.totalCount == 2)
        try await store.delete(QueryDescription(table: "todo", filter: .binary(.eq, Self.m("COMPLETE"), .literal(.bool(true)))))
        #expect(try await ids(store, nil) == ["a", "c"])
        await #expect(throws: StoreError.self) {
            try await store.read(QueryDescription(table: "todo", filter: .binary(.eq, Self.m("texts"), Self.s("x"))))
        }
        try await store.close()
    }

    @Test func deepFiltersAreRefusedNotCrashed() {
        var filter = FilterExpression.literal(.bool(true))
        for _ in 0..<10_000 { filter = .unary(.not, filter) }
        let translator = SQLTranslator(table: "t", columns: ["id": .text])
        #expect(throws: QueryError.self) { try translator.expression(filter) }
    }
}
