import Foundation
import SyncSQL
import SyncWire

/// The reads a change watcher (``ChangeHub``) makes of a scope of a table: each through the
/// table's `updatedAt` index, (owner, `updatedAt`) for a per-user table.
enum ChangeReads {
    /// A scope's state in full: its newest `updatedAt` (deleted rows included) and its number of
    /// rows. A table that does not exist (yet) has no rows.
    static func fullState(of table: String, scope: RowScope, _ storage: any TableStorage) async throws -> ChangePositions.State {
        let newest = QueryDescription(
            table: table, orderBy: [OrderBy(SystemProperty.updatedAt, ascending: false)], top: 1,
            selection: [SystemProperty.updatedAt])
        func newestStamp() async throws -> String? {
            try await storage.select(newest, scope: scope, extraFilter: nil).first?[SystemProperty.updatedAt]?.stringValue
        }
        // Two queries, no common transaction: the count belongs to the newest stamp only when no
        // write (every write stamps a newer updatedAt) became visible between them.
        var stamp = try await newestStamp()
        while true {
            let count = try await storage.count(QueryDescription(table: table), scope: scope, extraFilter: nil)
            let after = try await newestStamp()
            if after == stamp { return ChangePositions.State(updatedAt: stamp, rows: count) }
            stamp = after
        }
    }

    /// A scope's state after `known`, from the rows written past its `updatedAt` alone: their
    /// newest `updatedAt`, and the rows created past it added to the count (rows become visible in
    /// `updatedAt` order, so every row created at or before it was counted already). Removals are
    /// not seen here (a watcher reads those scopes in full).
    static func state(
        of table: String, scope: RowScope, after known: ChangePositions.State, _ storage: any TableStorage
    ) async throws -> ChangePositions.State {
        var query = QueryDescription(
            table: table, orderBy: [OrderBy(SystemProperty.updatedAt, ascending: true)],
            selection: [SystemProperty.createdAt, SystemProperty.updatedAt])
        if let stamp = known.updatedAt, let date = WireDate.date(from: stamp) {
            query.filter = .binary(.gt, .member(SystemProperty.updatedAt), .literal(.date(date)))
        }
        var state = known
        for row in try await storage.select(query, scope: scope, extraFilter: nil) {
            guard let updatedAt = row[SystemProperty.updatedAt]?.stringValue else { continue }
            if let stamp = known.updatedAt, updatedAt <= stamp { continue }
            state.updatedAt = updatedAt
            if known.updatedAt.map({ row[SystemProperty.createdAt]?.stringValue ?? "" > $0 }) ?? true { state.rows += 1 }
        }
        return state
    }
}
