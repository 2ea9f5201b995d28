import CipherSync
import CipherSyncStoreConformance
import InMemoryStoreSupport
import Testing

/// The conformance suite finds a store's faults: each store here breaks one clause of the contract,
/// and the suite names the checks of that clause (and passes the others).
@Suite struct BrokenStoreTests {
    @Test func aStoreThatKeepsTheWritesOfAFailedTransactionFails() async {
        let failures = await StoreConformance.run { NoRollbackStore() }
        let failed = Set(failures.map(\.check))
        #expect(failed.contains("a write that throws changes nothing"))
        #expect(!failed.contains("upsert stores items and read returns them"))
        #expect(!failed.contains("a write reads its own writes"))
    }

    @Test func aStoreThatMatchesIdsExactlyFails() async {
        let failures = await StoreConformance.run { ExactIdStore() }
        let failed = Set(failures.map(\.check))
        #expect(failed.contains("ids match whatever their ASCII case"))
        #expect(!failed.contains("a write that throws changes nothing"))
    }
}

/// Commits what a write transaction did before it threw.
struct NoRollbackStore: LocalStore {
    let inner = InMemoryStore()

    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
        try await inner.read(body)
    }

    func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
        try await inner.write { writer in Result { try body(writer) } }.get()
    }
}

/// Reads and deletes by id as given, letter case included (its upserts are the in-memory store's).
struct ExactIdStore: LocalStore {
    let inner = InMemoryStore()

    func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
        try await inner.read { try body(ExactIds(base: $0, writer: nil)) }
    }

    func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
        try await inner.write { try body(ExactIds(base: $0, writer: $0)) }
    }

    /// Keeps only the items whose id is spelled as the filter's `id eq` literal, and deletes only
    /// ids spelled as stored.
    struct ExactIds: StoreWriter {
        let base: any StoreReader
        let writer: (any StoreWriter)?

        func read(_ query: QueryDescription) throws -> QueryResult {
            var result = try base.read(query)
            if case .binary(.eq, .member("id"), .literal(.string(let id)))? = query.filter {
                result.items = result.items.filter { $0["id"]?.stringValue == id }
            }
            return result
        }

        func upsert(table: String, items: [JSONObject], ignoreMissingColumns: Bool) throws {
            try writer?.upsert(table: table, items: items, ignoreMissingColumns: ignoreMissingColumns)
        }

        func delete(table: String, ids: [String]) throws {
            let stored = try base.read(QueryDescription(table: table)).items.compactMap { $0["id"]?.stringValue }
            try writer?.delete(table: table, ids: ids.filter(stored.contains))
        }

        func delete(_ query: QueryDescription) throws {
            try writer?.delete(query)
        }
    }
}
