import CipherSync
import Foundation

/// The checks of `StoreReader` and `StoreWriter`: items, ids, properties, queries, deletes.
extension StoreConformance {
    static let tableChecks: [Check] = [
        Check(name: "upsert stores items and read returns them", body: upsertAndRead),
        Check(name: "upsert keeps the properties an update does not name", body: upsertMerges),
        Check(name: "ids match whatever their ASCII case", body: caselessIds),
        Check(name: "property names match whatever their ASCII case", body: caselessProperties),
        Check(name: "the deleted flag is not stored", body: deletedFlag),
        Check(name: "ignoreMissingColumns drops new properties", body: ignoredColumns),
        Check(name: "a missing table reads as empty", body: missingTable),
        Check(name: "filters compare as SQL does", body: filters),
        Check(name: "order, top, skip and the total count", body: paging),
        Check(name: "a selection returns the selected properties", body: selection),
        Check(name: "delete by ids and by query", body: deletes),
    ]

    /// Six items of `table`: `n` 1…6, `text` "item n", `done` for even `n`, `note` only on 1.
    static func sixItems(_ store: any LocalStore, table: String = "things") async throws {
        let items: [JSONObject] = (1...6).map { n in
            var item: JSONObject = ["id": .string("id-\(n)"), "n": .int(Int64(n)), "text": .string("item \(n)"), "done": .bool(n % 2 == 0)]
            if n == 1 { item["note"] = "first" }
            return item
        }
        try await store.upsert(table: table, items: items)
    }

    static func upsertAndRead(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let item: JSONObject = ["id": "a", "text": "hello", "count": 3, "ratio": 0.5, "done": true, "nothing": nil]
        try await store.upsert(table: "things", items: [item, ["id": "b", "text": "world"]])
        let items = try await store.items("things")
        r.expectEqual(items.keys.sorted(), ["a", "b"], "the ids read back")
        let read = try await store.lookup(table: "things", id: "a")
        r.expect(read != nil, "lookup(table:id:) found no item a")
        for (name, value) in item {
            r.expectEqual(read?[name] ?? .null, value, "property \(name) of a")
        }
    }

    static func upsertMerges(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "things", items: [["id": "a", "text": "one", "count": 1]])
        try await store.upsert(table: "things", items: [["id": "a", "count": 2]])
        let read = try await store.lookup(table: "things", id: "a")
        r.expectEqual(read?["text"], "one", "a property the update does not name")
        r.expectEqual(read?["count"], 2, "a property the update names")
        r.expectEqual(try await store.items("things").count, 1, "rows after an update")
    }

    static func caselessIds(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "things", items: [["id": "Item-One", "n": 1]])
        try await store.upsert(table: "things", items: [["id": "ITEM-ONE", "n": 2]])
        let items = try await store.items("things")
        r.expectEqual(Array(items.keys), ["Item-One"], "the ids after an upsert of the same id in other letters (the first spelling stays)")
        r.expectEqual(items["Item-One"]?["n"], 2, "the row the second upsert updated")
        r.expect(try await store.lookup(table: "things", id: "item-one") != nil, "lookup of item-one found nothing")
        let filtered = try await store.ids(QueryDescription(table: "things", filter: .binary(.eq, .member("id"), .literal(.string("ITEM-one")))))
        r.expectEqual(filtered, ["Item-One"], "a filter id eq 'ITEM-one'")
        try await store.delete(table: "things", ids: ["item-ONE"])
        r.expect(try await store.items("things").isEmpty, "delete(table:ids:) of item-ONE left the row")
    }

    static func caselessProperties(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "things", items: [["id": "a", "Text": "one"]])
        try await store.upsert(table: "things", items: [["id": "a", "text": "two"]])
        let read = try await store.lookup(table: "things", id: "a")
        r.expectEqual(read?["Text"], "two", "the property Text after an upsert of text")
        r.expect(read?["text"] == nil, "a second property text appeared beside Text")
        do {
            try await store.upsert(table: "things", items: [["id": "b", "name": "x", "NAME": "y"]])
            r.fail("an item with properties name and NAME was stored")
        } catch {
            r.expect(try await store.lookup(table: "things", id: "b") == nil, "a refused item was stored")
        }
    }

    static func deletedFlag(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "things", items: [["id": "a", "text": "x", "deleted": false], ["id": "b", "Deleted": true]])
        let items = try await store.items("things")
        r.expectEqual(items.keys.sorted(), ["a", "b"], "the items stored")
        r.expect(!items.values.contains { $0.keys.contains { $0.lowercased() == "deleted" } }, "a deleted property was stored")
    }

    static func ignoredColumns(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "things", items: [["id": "a", "text": "x"]])
        try await store.upsert(table: "things", items: [["id": "b", "text": "y", "extra": 1]], ignoreMissingColumns: true)
        let read = try await store.lookup(table: "things", id: "b")
        r.expectEqual(read?["text"], "y", "a property with a column")
        r.expect(read?["extra"] == nil, "a property without a column was stored")
    }

    static func missingTable(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let result = try await store.read(QueryDescription(table: "nowhere", includeTotalCount: true))
        r.expect(result.items.isEmpty, "items read from a table never written")
        r.expectEqual(result.totalCount ?? 0, 0, "the total count of a table never written")
        r.expect(try await store.lookup(table: "nowhere", id: "a") == nil, "lookup in a table never written")
        try await store.delete(table: "nowhere", ids: ["a"])
        try await store.delete(QueryDescription(table: "nowhere"))
    }

    static func filters(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await sixItems(store)
        func ids(_ filter: FilterExpression) async throws -> [String] {
            try await store.ids(QueryDescription(table: "things", filter: filter, orderBy: [OrderBy("n")]))
        }
        let n = FilterExpression.member("n")
        let cases: [(String, FilterExpression, [Int])] = [
            ("n eq 3", .binary(.eq, n, .literal(.int(3))), [3]),
            ("n ne 3", .binary(.ne, n, .literal(.int(3))), [1, 2, 4, 5, 6]),
            ("n gt 4", .binary(.gt, n, .literal(.int(4))), [5, 6]),
            ("n ge 4", .binary(.ge, n, .literal(.int(4))), [4, 5, 6]),
            ("n lt 2.5", .binary(.lt, n, .literal(.double(2.5))), [1, 2]),
            ("n le 2", .binary(.le, n, .literal(.int(2))), [1, 2]),
            ("done eq true", .binary(.eq, .member("done"), .literal(.bool(true))), [2, 4, 6]),
            (
                "n gt 1 and done eq false", .binary(.and, .binary(.gt, n, .literal(.int(1))), .binary(.eq, .member("done"), .literal(.bool(false)))),
                [3, 5]
            ),
            ("n eq 1 or n eq 6", .binary(.or, .binary(.eq, n, .literal(.int(1))), .binary(.eq, n, .literal(.int(6)))), [1, 6]),
            ("not (n lt 5)", .unary(.not, .binary(.lt, n, .literal(.int(5)))), [5, 6]),
            ("note eq null", .binary(.eq, .member("note"), .literal(.null)), [2, 3, 4, 5, 6]),
            ("note ne null", .binary(.ne, .member("note"), .literal(.null)), [1]),
            ("text eq 'item 2'", .binary(.eq, .member("text"), .literal(.string("item 2"))), [2]),
            ("text eq 'ITEM 2' (text compares exactly)", .binary(.eq, .member("text"), .literal(.string("ITEM 2"))), []),
            ("startswith(text, 'item 1')", .function(.startswith, [.member("text"), .literal(.string("item 1"))]), [1]),
            ("tolower(text) eq 'item 4'", .binary(.eq, .function(.tolower, [.member("text")]), .literal(.string("item 4"))), [4]),
            ("n add 1 eq 3", .binary(.eq, .binary(.add, n, .literal(.int(1))), .literal(.int(3))), [2]),
        ]
        for (name, filter, expected) in cases {
            r.expectEqual(try await ids(filter), expected.map { "id-\($0)" }, "the items of \(name)")
        }
    }

    static func paging(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await sixItems(store)
        let descending = QueryDescription(table: "things", orderBy: [OrderBy("n", ascending: false)], top: 2, skip: 1, includeTotalCount: true)
        let page = try await store.read(descending)
        r.expectEqual(page.items.compactMap { $0["id"]?.stringValue }, ["id-5", "id-4"], "orderby n desc, skip 1, top 2")
        r.expectEqual(page.totalCount, 6, "the total count (top and skip ignored)")
        let twoKeys = QueryDescription(table: "things", orderBy: [OrderBy("done"), OrderBy("n", ascending: false)])
        r.expectEqual(try await store.ids(twoKeys), ["id-5", "id-3", "id-1", "id-6", "id-4", "id-2"], "orderby done, n desc")
        let none = try await store.read(QueryDescription(table: "things", top: 0, includeTotalCount: true))
        r.expect(
            none.items.isEmpty && none.totalCount == 6,
            "top 0 with the total count: got \(none.items.count) items, count \(String(describing: none.totalCount))")
    }

    static func selection(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await sixItems(store)
        let items = try await store.read(QueryDescription(table: "things", orderBy: [OrderBy("n")], selection: ["id", "text"])).items
        r.expectEqual(items.count, 6, "items selected")
        r.expectEqual(items.first?["text"], "item 1", "a selected property")
        r.expect(items.allSatisfy { $0["n"] == nil && $0["done"] == nil }, "a property not selected was returned")
    }

    static func deletes(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await sixItems(store)
        try await store.delete(table: "things", ids: ["id-1", "id-2", "no-such-id"])
        r.expectEqual(try await store.items("things").keys.sorted(), ["id-3", "id-4", "id-5", "id-6"], "after a delete by ids")
        try await store.delete(QueryDescription(table: "things", filter: .binary(.eq, .member("done"), .literal(.bool(true))), top: 1))
        r.expectEqual(try await store.items("things").keys.sorted(), ["id-3", "id-5"], "after a delete of done eq true (top ignored)")
        try await store.delete(QueryDescription(table: "things"))
        r.expect(try await store.items("things").isEmpty, "a delete without a filter left rows")
    }
}
