import Foundation
import SyncSQL
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@Suite struct StoreItemTests {
    @Test(arguments: StoreKind.allCases)
    func upsertThenLookupKeepsEveryJSONType(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let item: JSONObject = [
            "id": "a1", "text": "buy milk ✓", "complete": false, "count": 3, "price": 2.5,
            "tags": ["x", 1], "meta": ["k": "v"], "version": "AAAB",
        ]
        try await store.upsert(table: "todo", items: [item])
        let stored = try #require(try await store.lookup(table: "todo", id: "a1"))
        #expect(stored == item)
        #expect(try await store.lookup(table: "todo", id: "missing") == nil)
        #expect(try await store.lookup(table: "never", id: "a1") == nil)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func upsertUpdatesOnlyTheGivenPropertiesAndAddsColumns(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "one", "complete": false]])
        try await store.upsert(table: "todo", items: [["id": "a", "complete": true, "priority": 2]])
        let stored = try #require(try await store.lookup(table: "todo", id: "a"))
        #expect(stored == ["id": "a", "text": "one", "complete": true, "priority": 2])
        let columns = try await store.read { try $0.columns(of: "todo") }
        #expect(columns == ["id": .text, "text": .text, "complete": .boolean, "priority": .integer])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func ignoreMissingColumnsDropsUnknownProperties(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.write { try $0.defineTable("todo", columns: ["text": .text]) }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t", "extra": 1]], ignoreMissingColumns: true)
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "text": "t"])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func nullsAreStoredAndReadBack(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t"]])
        try await store.upsert(table: "todo", items: [["id": "a", "text": nil]])
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "text": nil])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func deleteByIdsIgnoresMissingIds(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: (1...5).map { ["id": .string("i\($0)"), "n": .int(Int64($0))] })
        try await store.delete(table: "todo", ids: ["i2", "i4", "nope"])
        let ids = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items.map { $0["id"] }
        #expect(ids == ["i1", "i3", "i5"])
        try await store.delete(table: "unknownTable", ids: ["x"])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func badInputIsATypedErrorAndChangesNothing(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "keep", "text": "t"]])
        let badItems: [[JSONObject]] = [
            [["id": "ok", "text": "x"], ["text": "no id"]],
            [["id": 42, "text": "integer id"]],
            [["id": "a/b", "text": "bad id"]],
        ]
        for items in badItems {
            await #expect(throws: StoreError.self) { try await store.upsert(table: "todo", items: items) }
        }
        for table in ["", "__operations", "bad name", "x;DROP TABLE todo", String(repeating: "t", count: 200)] {
            await #expect(throws: StoreError.self) { try await store.upsert(table: table, items: [["id": "a"]]) }
        }
        let all = try await store.read(QueryDescription(table: "todo")).items
        #expect(all == [["id": "keep", "text": "t"]])
        #expect(try await store.read { try $0.columns(of: "todo") } == ["id": .text, "text": .text])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedWriteLeavesNoNewColumnBehind(_ kind: StoreKind) async throws {
        struct Abort: Error {}
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t"]])
        await #expect(throws: Abort.self) {
            try await store.write { writer in
                try writer.upsert(table: "todo", items: [["id": "b", "newColumn": 1]], ignoreMissingColumns: false)
                throw Abort()
            }
        }
        #expect(try await store.read { try $0.columns(of: "todo") } == ["id": .text, "text": .text])
        try await store.upsert(table: "todo", items: [["id": "c", "newColumn": true]])
        #expect(try await store.read { try $0.columns(of: "todo") }?["newColumn"] == .boolean)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func closedStoreRefusesEveryCall(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.close()
        await #expect(throws: StoreError.self) { try await store.lookup(table: "todo", id: "a") }
        await #expect(throws: StoreError.self) { try await store.upsert(table: "todo", items: [["id": "a"]]) }
    }
}

/// Column names ignore ASCII case in SQLite, and so does the store: a property that differs from
/// a column only by case is that column, and one item cannot name a column twice.
@Suite struct ColumnNameCaseTests {
    /// Table names are SQLite identifiers too: `todoitem` is the table `TodoItem`.
    @Test(arguments: StoreKind.allCases)
    func aTableNameDifferingOnlyByCaseIsTheSameTable(_ kind: StoreKind) async throws {
        let (test, first) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        var store = first
        try await store.upsert(table: "TodoItem", items: [["id": "a", "text": "one", "done": false]])
        try await store.upsert(table: "todoitem", items: [["id": "b", "Text": "two", "done": true]])
        #expect(
            try await store.read(QueryDescription(table: "TODOITEM", orderBy: [OrderBy("id")])).items.compactMap { $0["text"]?.stringValue } == [
                "one", "two",
            ])
        #expect(try await store.read { try $0.columns(of: "todoItem") } == ["id": .text, "text": .text, "done": .boolean])
        try await store.close()
        store = try await test.open()
        #expect(try await store.lookup(table: "todoitem", id: "a")?["done"] == false)
        try await store.delete(table: "TODOITEM", ids: ["a"])
        try await store.write { try $0.defineTable("todoItem", columns: ["note": .text]) }
        try await store.upsert(table: "TodoItem", items: [["id": "b", "note": "kept"]])
        #expect(try await store.lookup(table: "todoitem", id: "b") == ["id": "b", "text": "two", "done": true, "note": "kept"])
        #expect(try await store.read(QueryDescription(table: "TodoItem")).items.count == 1)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aPropertyDifferingOnlyByCaseUsesTheExistingColumn(_ kind: StoreKind) async throws {
        let (test, first) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        var store = first
        try await store.upsert(table: "todo", items: [["id": "a", "text": "one", "updatedAt": "2026-01-01T00:00:00.000Z"]])
        try await store.upsert(table: "todo", items: [["id": "a", "Text": "two", "UpdatedAt": "2026-02-02T00:00:00.000Z"]])
        try await store.upsert(table: "todo", items: [["id": "b", "TEXT": "three"]])
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "text": "two", "updatedAt": "2026-02-02T00:00:00.000Z"])
        #expect(try await store.lookup(table: "todo", id: "b") == ["id": "b", "text": "three", "updatedAt": nil])
        let columns: [String: ColumnType] = ["id": .text, "text": .text, "updatedAt": .text]
        #expect(try await store.read { try $0.columns(of: "todo") } == columns)
        // The schema on disk, read again from the file, has no second column either.
        try await store.close()
        store = try await test.open()
        #expect(try await store.read { try $0.columns(of: "todo") } == columns)
        try await store.upsert(table: "todo", items: [["id": "b", "tExT": "four"]])
        #expect(try await store.lookup(table: "todo", id: "b")?["text"] == "four")
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func ignoringMissingColumnsStillStoresAPropertyDifferingOnlyByCase(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.write { try $0.defineTable("todo", columns: ["complete": .boolean]) }
        try await store.upsert(table: "todo", items: [["id": "a", "Complete": true, "extra": 1]], ignoreMissingColumns: true)
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "complete": true])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func oneBatchSpellingANewPropertyTwoWaysMakesOneColumn(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "x", "text": "t"]])
        for table in ["todo", "fresh"] {
            try await store.upsert(table: table, items: [["id": "a", "Done": nil], ["id": "b", "DONE": true], ["id": "c", "done": false]])
            let columns = try #require(try await store.read { try $0.columns(of: table) })
            #expect(columns.filter { $0.key.lowercased() == "done" } == ["DONE": .boolean], "\(table)")
            let notX = FilterExpression.binary(.ne, .member("id"), .literal(.string("x")))
            let rows = try await store.read(QueryDescription(table: table, filter: notX, orderBy: [OrderBy("id")]))
            #expect(rows.items.map { $0["DONE"] ?? "absent" } == [JSONValue.null, true, false], "\(table)")
        }
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func twoPropertiesDifferingOnlyByCaseAreRefusedAndChangeNothing(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "keep"]])
        let badBatches: [[JSONObject]] = [
            [["id": "a", "text": "x", "Text": "y"]],
            [["id": "b", "text": "new"], ["id": "c", "flag": true, "FLAG": false]],
            [["id": "a", "ID": "b"]],
        ]
        for items in badBatches {
            for ignoreMissingColumns in [false, true] {
                let error = await #expect(throws: StoreError.self) {
                    try await store.upsert(table: "todo", items: items, ignoreMissingColumns: ignoreMissingColumns)
                }
                guard let error, error == .invalidItem, let why = error.reason else {
                    Issue.record("expected invalidItem, got \(String(describing: error))")
                    continue
                }
                #expect(why.contains("differ only by case"), "\(why)")
            }
        }
        let error = await #expect(throws: StoreError.self) {
            try await store.upsert(table: "fresh", items: [["id": "a", "Note": 1, "note": 2]])
        }
        #expect(error?.description == "Invalid item: the properties 'Note' and 'note' differ only by case")
        await #expect(throws: StoreError.self) {
            try await store.write { try $0.defineTable("todo", columns: ["note": .text, "NOTE": .text]) }
        }
        #expect(try await store.read(QueryDescription(table: "todo")).items == [["id": "a", "text": "keep"]])
        #expect(try await store.read { try $0.columns(of: "todo") } == ["id": .text, "text": .text])
        #expect(try await store.read { try $0.columns(of: "fresh") } == nil)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func definingAColumnDifferingOnlyByCaseKeepsTheExistingOne(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t"]])
        try await store.write { try $0.defineTable("todo", columns: ["TEXT": .integer, "ID": .text, "due": .text]) }
        #expect(try await store.read { try $0.columns(of: "todo") } == ["id": .text, "text": .text, "due": .text])
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "text": "t", "due": nil])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func onlyASCIILettersFoldCaseAsInSQLite(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "fruit", items: [["id": "a", "äpfel": 1, "Äpfel": 2]])
        #expect(try await store.lookup(table: "fruit", id: "a") == ["id": "a", "äpfel": 1, "Äpfel": 2])
        #expect(try await store.read { try $0.columns(of: "fruit") }?.count == 3)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func canonicallyEquivalentSpellingsShareTheStoredColumn(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let decomposed = "cafe\u{301}", composed = "caf\u{E9}"
        #expect(Array(decomposed.utf8) != Array(composed.utf8))
        try await store.upsert(table: "menu", items: [["id": "a", decomposed: 1]])
        try await store.upsert(table: "menu", items: [["id": "a", composed: 2]])
        let stored = try #require(try await store.lookup(table: "menu", id: "a"))
        #expect(stored.count == 2 && stored[composed] == 2)
        #expect(try await store.read { try $0.columns(of: "menu") }?.count == 2)
        try await store.close()
    }
}
