import Foundation
import SyncSQL
import SyncWire

/// The reads a change watcher (``ChangeHub``) makes of a scope of a table: each through the
/// table's `updatedAt` index, (owner, `updatedAt`) for a per-user table, so none grows with the
/// table. No row is counted: every write stamps a new `updatedAt` — soft deletes and undeletes
/// included — and a hard delete's stamp is recorded by the storage
/// (``TableStorage/removalStamp(of:scope:)``), so the newest stamp alone says whether a scope
/// changed.
enum ChangeReads {
    /// A scope's state in full: the newer of its rows' newest `updatedAt` (deleted rows included)
    /// and its newest hard delete's stamp. A table that does not exist (yet) has neither.
    static func fullState(of table: String, scope: RowScope, _ storage: any TableStorage) async throws -> ChangePositions.State {
        let newest = try await newestStamp(of: table, scope: scope, after: nil, storage)
        let removal = try await storage.removalStamp(of: table, scope: scope)
        return ChangePositions.State(updatedAt: [newest, removal].compactMap { $0 }.max())
    }

    /// A scope's state after `known`, from its rows written past `known`'s `updatedAt` alone (a
    /// hard delete is announced as such, and a watcher reads that scope in full).
    static func state(
        of table: String, scope: RowScope, after known: ChangePositions.State, _ storage: any TableStorage
    ) async throws -> ChangePositions.State {
        guard let newest = try await newestStamp(of: table, scope: scope, after: known.updatedAt, storage) else { return known }
        guard let stamp = known.updatedAt else { return ChangePositions.State(updatedAt: newest) }
        return ChangePositions.State(updatedAt: max(stamp, newest))
    }

    /// The newest `updatedAt` of the scope's rows (past `stamp` when given), or `nil`: one row
    /// read through the index.
    private static func newestStamp(
        of table: String, scope: RowScope, after stamp: String?, _ storage: any TableStorage
    ) async throws
        -> String?
    {
        var query = QueryDescription(
            table: table, orderBy: [OrderBy(SystemProperty.updatedAt, ascending: false)], top: 1, selection: [SystemProperty.updatedAt])
        if let stamp, let date = WireDate.date(from: stamp) {
            query.filter = .binary(.gt, .member(SystemProperty.updatedAt), .literal(.date(date)))
        }
        return try await storage.select(query, scope: scope, extraFilter: nil).first?[SystemProperty.updatedAt]?.stringValue
    }
}
