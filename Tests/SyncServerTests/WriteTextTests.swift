import Foundation
import SyncSQL
import SyncServer
import SyncWire
import Testing

/// The SQLite storage keeps the SQL text of each shape of single write (table, scope kind,
/// columns, condition) and binds each write's values to it, and its connection keeps the
/// statements of recent texts prepared: every write must still store its own values in its own
/// table, and every read answer every column, whatever came before and whatever the schema became.
@Suite struct WriteTextTests {
    /// Runs `body` with a new storage in memory, closed afterwards.
    private func withStorage(_ body: (SQLiteTableStorage) async throws -> Void) async throws {
        let storage = try await SQLiteTableStorage.open(.memory, logger: .quiet)
        do {
            try await body(storage)
        } catch {
            try? await storage.close()
            throw error
        }
        try await storage.close()
    }

    private func written(_ result: WriteResult, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONObject {
        guard case .written(let row) = result else {
            Issue.record("not written: \(result)", sourceLocation: sourceLocation)
            throw WriteFailed()
        }
        return row
    }

    private struct WriteFailed: Error {}

    @Test func aShapeSeenBeforeStoresEachWritesOwnValuesAfterAColumnIsAdded() async throws {
        try await withStorage { storage in
            _ = try await storage.ensureColumns("t", scope: .shared, ["n": .integer])
            let first = try written(try await storage.insert(table: "t", scope: .shared, item: ["id": "a", "n": 1]))
            #expect(first["n"] == 1)
            _ = try await storage.ensureColumns("t", scope: .shared, ["m": .text])
            let widened = try written(try await storage.insert(table: "t", scope: .shared, item: ["id": "b", "n": 2, "m": "two"]))
            #expect(widened["n"] == 2 && widened["m"] == "two")
            // The first shape again, now that the table has one more column: its row has no `m`.
            let again = try written(try await storage.insert(table: "t", scope: .shared, item: ["id": "c", "n": 3]))
            #expect(again["n"] == 3 && again["m"] == .null && again["id"] == "c")
            #expect(try await storage.row(table: "t", id: "a", scope: .shared)?["n"] == 1)
            #expect(try await storage.row(table: "t", id: "b", scope: .shared)?["m"] == "two")
            #expect(try await storage.row(table: "t", id: "c", scope: .shared)?["n"] == 3)
        }
    }

    @Test func aReadAndAnUpdatePreparedBeforeAColumnWasAddedAnswerTheNewColumn() async throws {
        try await withStorage { storage in
            _ = try await storage.ensureColumns("t", scope: .shared, ["n": .integer])
            let any = WriteCondition(version: nil, deleted: nil)
            _ = try written(try await storage.insert(table: "t", scope: .shared, item: ["id": "a", "n": 1]))
            // Both statements run once before the column exists, so both are kept prepared.
            #expect(try await storage.row(table: "t", id: "a", scope: .shared)?["m"] == nil)
            _ = try written(try await storage.update(table: "t", id: "a", scope: .shared, values: ["n": 2], condition: any))
            _ = try await storage.ensureColumns("t", scope: .shared, ["m": .text])
            let updated = try written(try await storage.update(table: "t", id: "a", scope: .shared, values: ["n": 3], condition: any))
            #expect(updated["n"] == 3 && updated["m"] == .null)
            _ = try written(try await storage.update(table: "t", id: "a", scope: .shared, values: ["m": "new"], condition: any))
            let read = try await storage.row(table: "t", id: "a", scope: .shared)
            #expect(read?["n"] == 3 && read?["m"] == "new")
        }
    }

    @Test func aClosedStorageRefusesEveryStatement() async throws {
        let storage = try await SQLiteTableStorage.open(.memory, logger: .quiet)
        _ = try await storage.ensureColumns("t", scope: .shared, ["n": .integer])
        try await storage.close()
        await #expect(throws: ServerSQLiteError.self) { try await storage.ping() }
        await #expect(throws: ServerSQLiteError.self) { _ = try await storage.row(table: "t", id: "a", scope: .shared) }
    }

    @Test func theSameColumnsInAnotherTableWriteThatTable() async throws {
        try await withStorage { storage in
            _ = try await storage.ensureColumns("t", scope: .shared, ["n": .integer])
            _ = try written(try await storage.insert(table: "t", scope: .shared, item: ["id": "a", "n": 1]))
            // A table created after the shape was first seen.
            _ = try await storage.ensureColumns("u", scope: .shared, ["n": .integer])
            _ = try written(try await storage.insert(table: "u", scope: .shared, item: ["id": "a", "n": 2]))
            #expect(try await storage.row(table: "t", id: "a", scope: .shared)?["n"] == 1)
            #expect(try await storage.row(table: "u", id: "a", scope: .shared)?["n"] == 2)
        }
    }

    @Test func repeatedUpdatesAndDeletesBindTheirOwnIdsVersionsAndValues() async throws {
        try await withStorage { storage in
            _ = try await storage.ensureColumns("t", scope: .shared, ["n": .integer])
            var versions: [String: String] = [:]
            for id in ["a", "b", "c"] {
                let row = try written(try await storage.insert(table: "t", scope: .shared, item: ["id": .string(id), "n": 0]))
                versions[id] = row[SystemProperty.version]?.stringValue
            }
            for (index, id) in zip(Int64(10)..., ["a", "b"]) {
                let condition = WriteCondition(version: versions[id], deleted: false)
                let row = try written(
                    try await storage.update(table: "t", id: id, scope: .shared, values: ["n": .int(index)], condition: condition))
                #expect(row["id"] == .string(id) && row["n"] == .int(index))
            }
            // The same shape with a version that no longer holds: a conflict, and nothing changes.
            let stale = try await storage.update(
                table: "t", id: "a", scope: .shared, values: ["n": 99], condition: WriteCondition(version: versions["a"], deleted: false))
            guard case .conflict(let current) = stale else { throw WriteFailed() }
            #expect(current["n"] == 10)
            // A delete of each shape twice, on different rows.
            _ = try written(try await storage.delete(table: "t", id: "b", scope: .shared, condition: WriteCondition(version: nil, deleted: nil)))
            _ = try written(try await storage.delete(table: "t", id: "c", scope: .shared, condition: WriteCondition(version: nil, deleted: nil)))
            #expect(try await storage.row(table: "t", id: "a", scope: .shared)?["n"] == 10)
            #expect(try await storage.row(table: "t", id: "b", scope: .shared) == nil)
            #expect(try await storage.row(table: "t", id: "c", scope: .shared) == nil)
        }
    }

    @Test func perUserWritesBindTheirOwner() async throws {
        try await withStorage { storage in
            for owner in ["alice", "bob"] {
                _ = try await storage.ensureColumns("p", scope: .owner(owner), ["n": .text])
                _ = try written(try await storage.insert(table: "p", scope: .owner(owner), item: ["id": "x", "n": .string(owner)]))
            }
            let any = WriteCondition(version: nil, deleted: nil)
            _ = try written(try await storage.update(table: "p", id: "x", scope: .owner("bob"), values: ["n": "bob2"], condition: any))
            #expect(try await storage.row(table: "p", id: "x", scope: .owner("alice"))?["n"] == "alice")
            #expect(try await storage.row(table: "p", id: "x", scope: .owner("bob"))?["n"] == "bob2")
        }
    }

    @Test func moreShapesThanAreKeptStillWriteTheirValues() async throws {
        try await withStorage { storage in
            let names = (0..<9).map { "c\($0)" }
            _ = try await storage.ensureColumns("t", scope: .shared, Dictionary(uniqueKeysWithValues: names.map { ($0, ColumnType.integer) }))
            // 300 subsets of nine columns: more shapes than the storage keeps texts of.
            for mask in 1...300 {
                var item: JSONObject = ["id": .string("r\(mask)")]
                for (bit, name) in names.enumerated() where mask & (1 << bit) != 0 { item[name] = .int(Int64(mask * 10 + bit)) }
                let row = try written(try await storage.insert(table: "t", scope: .shared, item: item))
                for (bit, name) in names.enumerated() {
                    #expect(row[name] == (mask & (1 << bit) != 0 ? .int(Int64(mask * 10 + bit)) : .null))
                }
            }
            #expect(try await storage.row(table: "t", id: "r300", scope: .shared)?["c2"] == .int(3002))
        }
    }
}
