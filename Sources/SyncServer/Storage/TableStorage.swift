public import SyncSQL
public import SyncWire

/// Where the server keeps its tables: the contract every storage engine implements
/// (``SQLiteTableStorage`` now; PostgreSQL next). The table service and the controller never see
/// SQL: an engine writes its queries with `SQLTranslator` in its own `SQLDialect`, and names
/// through `SQLIdentifier.quote`.
///
/// ## Rows
/// A row is a JSON object: the item's properties plus the system columns the storage owns —
/// `id`, `createdAt`, `updatedAt`, `version` and `deleted` — and nothing else (a per-user table's
/// owner column, ``TableSchema/ownerColumn``, is never returned). Values are stored through
/// `SQLValue(json:)` and read back through `JSONValue(sql:type:)`, so an item reads back as it was
/// written.
///
/// ## Ids
/// An id names one item **whatever the ASCII case of its letters**: `ONE` and `one` are one item,
/// as SQL Server (behind the original Mobile Apps backends) compares them. The spelling first
/// written is stored and returned; a lookup, update, delete or undelete by any spelling finds it;
/// an insert of another spelling is a conflict with the stored row; a `$filter` comparison with
/// `id` folds the same way (the dialect's `SQLDialect.foldedID(_:)`). Only ASCII letters fold
/// (`É` and `é` are two ids), as `ItemID/sameItem(_:_:)` says.
///
/// ## Scope
/// Every call that reads or writes rows takes a ``RowScope``. A shared table is used with
/// ``RowScope/shared``; a per-user table with ``RowScope/owner(_:)``, and then **every statement
/// restricts the rows to that owner inside its SQL** (a `WHERE` on the owner column, never a
/// filter applied to results afterwards). The key of a per-user row is (owner, id): two owners
/// can each have an item `a`, and nothing one owner does can read, change or reveal the other's.
/// A table is created shared or per-user by the first ``ensureColumns(_:scope:_:)`` and stays
/// so; a scope of the other kind is ``TableStorageError/scopeMismatch(table:)``.
///
/// ## Writes become visible in `updatedAt` order
/// The storage, not its caller, stamps a write: `createdAt` (on insert), `updatedAt` and a new
/// `version` (``RowVersion/make()``). A write of a table, in **one transaction**:
/// 1. takes the table's **write serialisation**, held until the transaction ends, which every
///    writer of the table takes the same way — in this process and in any other process over the
///    same database: in PostgreSQL a lock on the table's metadata row (`SELECT … FOR UPDATE`) or
///    a transaction-scoped advisory lock; in SQLite the database's write lock, which the write
///    statement itself holds;
/// 2. under it, reads the table's last stamp, takes `updatedAt = max(now, last + 1 ms)`
///    (``WriteStamp/next(after:now:)``) and records it as the last stamp (in PostgreSQL in the
///    metadata row; SQLite's single process keeps it in a ``StampClock`` its statement calls);
/// 3. writes the row, returning it as stored (`RETURNING`);
/// 4. commits, which releases the serialisation.
///
/// So the stamps of a table increase strictly in the order its writes become visible, whatever
/// the number of server instances or the skew of their clocks: **no row can become visible with
/// an `updatedAt` at or below one a reader could already have read**, and an incremental pull
/// (`updatedAt ge <token>`) never misses a write. Reads take no lock. The tests' `WriteObserver` sees
/// the steps of each write, so a test can hold one just before it commits.
///
/// ## Conditional writes
/// Insert, update and delete check their condition and write in one atomic step; two requests
/// can never both win. An update or delete whose condition does not hold returns
/// ``WriteResult/conflict(_:)`` with the row as it is, one whose row is missing (in the scope)
/// ``WriteResult/missing``. Nothing is written in either case.
///
/// ## Types
/// A column keeps the type it was created with (`ColumnType`). The caller checks values
/// against ``TableSchema/columns`` (``ensureColumns(_:scope:_:)`` returns them) before a write.
///
/// ## Errors
/// A failure of the engine (its connection, its disk) is thrown as the engine's error; the
/// server answers 500 and logs it. ``ping()`` is the health check.
public protocol TableStorage: Sendable {
    /// Runs a batch of writes (`body`, which calls this storage) as one transaction where the
    /// engine can: every write of the batch becomes durable at once, at its end. Each write keeps
    /// its own semantics (its condition, its stamp, its result); writes of other callers wait
    /// until the transaction ends. An error thrown by `body` undoes the batch's writes.
    ///
    /// - Parameter body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the engine's error when the transaction fails.
    func inTransaction<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T

    /// Runs a batch of writes of one table as ``inTransaction(_:)`` does, knowing the ids the
    /// writes name: an engine may read those rows at once and write the batch's changes as a few
    /// statements at its end. Each write's result is the one it would have had on its own, after
    /// the batch's earlier writes. The default runs ``inTransaction(_:)``.
    ///
    /// - Parameters:
    ///   - table: The table every write of `body` names.
    ///   - scope: The scope of every write of `body`.
    ///   - ids: The ids the writes name (an insert without an id names none).
    ///   - body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the engine's error when the transaction fails.
    func inTransaction<T: Sendable>(
        table: String, scope: RowScope, ids: [String], _ body: @Sendable () async throws -> T
    ) async throws -> T

    /// Checks that the storage answers (a trivial query).
    ///
    /// - Throws: The engine's error when it does not.
    func ping() async throws

    /// The tables that exist, with their columns and kind.
    ///
    /// - Returns: One schema per table, in no particular order.
    /// - Throws: The engine's error.
    func tables() async throws -> [TableSchema]

    /// The schema of `table` (matched as the engine matches names: ASCII case folded), or `nil`
    /// when it was never written.
    ///
    /// - Parameter table: The table's name, in any case.
    /// - Returns: Its schema.
    /// - Throws: The engine's error.
    func schema(of table: String) async throws -> TableSchema?

    /// Creates `table` (with the system columns, and an owner column when `scope` is an owner)
    /// or adds the columns it lacks; a column that exists under another ASCII case is not added.
    /// Concurrent calls (from any instance) must not fail because another added a column first.
    ///
    /// - Parameters:
    ///   - table: The table's name.
    ///   - scope: The scope of the request; decides the kind of a new table.
    ///   - columns: The columns the request needs, with the types its values would create.
    /// - Returns: The table's schema afterwards.
    /// - Throws: ``TableStorageError/scopeMismatch(table:)`` for an existing table of the other
    ///   kind; the engine's error.
    func ensureColumns(_ table: String, scope: RowScope, _ columns: [String: ColumnType]) async throws -> TableSchema

    /// The rows of `scope` a query matches, with `extraFilter` ANDed in.
    ///
    /// - Parameters:
    ///   - query: The query (filter, order, top, skip, selection).
    ///   - scope: The rows the request may see.
    ///   - extraFilter: A filter ANDed with the query's, such as "not deleted".
    /// - Returns: The rows; none when the table does not exist.
    /// - Throws: `QueryError` when the query names an unknown column; the engine's error.
    func select(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> [JSONObject]

    /// The rows ``select(_:scope:extraFilter:)`` returns, as the JSON text of an array of items
    /// (a page of a list): the same bytes `JSONWriter` writes for those rows. An engine may write
    /// them straight from its result rows; the default selects the items and writes them.
    ///
    /// - Parameters:
    ///   - query: The query (filter, order, top, skip, selection).
    ///   - scope: The rows the request may see.
    ///   - extraFilter: A filter ANDed with the query's, such as "not deleted".
    /// - Returns: The page; empty when the table does not exist.
    /// - Throws: `QueryError` when the query names an unknown column; `JSONError` for a value
    ///   JSON cannot hold; the engine's error.
    func selectPage(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> ItemPage

    /// The number of rows of `scope` a query's filter matches, ignoring top and skip.
    ///
    /// - Parameters:
    ///   - query: The query; only its filter is read.
    ///   - scope: The rows the request may see.
    ///   - extraFilter: A filter ANDed with the query's.
    /// - Returns: The count; 0 when the table does not exist.
    /// - Throws: `QueryError` when the filter cannot be translated; the engine's error.
    func count(_ query: QueryDescription, scope: RowScope, extraFilter: FilterExpression?) async throws -> Int

    /// The row of `scope` whose id is `id` (any ASCII case), deleted or not.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - id: The id, in any ASCII case.
    ///   - scope: The rows the request may see.
    /// - Returns: The row, or `nil` when there is none (or no table).
    /// - Throws: The engine's error.
    func row(table: String, id: String, scope: RowScope) async throws -> JSONObject?

    /// The row ``row(table:id:scope:)`` returns, which no other transaction can change or
    /// delete until the transaction the current task runs in (``inTransaction(_:)``) ends. The
    /// default returns ``row(table:id:scope:)``: an engine whose transaction holds the whole
    /// database's write lock (SQLite) locks every row already.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - id: The id, in any ASCII case.
    ///   - scope: The rows the request may see.
    /// - Returns: The row, or `nil` when there is none (or no table).
    /// - Throws: The engine's error.
    func lockedRow(table: String, id: String, scope: RowScope) async throws -> JSONObject?

    /// Inserts an item, stamped by the storage (`createdAt`, `updatedAt`, `version`, and
    /// `deleted` false), under the table's write serialisation.
    ///
    /// - Parameters:
    ///   - table: The table (it exists: ``ensureColumns(_:scope:_:)`` ran).
    ///   - scope: The owner the row gets, or shared.
    ///   - item: The item: `id` (a valid id) and user properties, no other system property.
    ///     A `null` property without a column is not stored.
    /// - Returns: ``WriteResult/written(_:)`` with the stored row, or ``WriteResult/conflict(_:)``
    ///   with the row of `scope` that has the id already (in any ASCII case).
    /// - Throws: The engine's error.
    func insert(table: String, scope: RowScope, item: JSONObject) async throws -> WriteResult

    /// Sets `values` on a row and stamps it (`updatedAt`, `version`), under the table's write
    /// serialisation, if `condition` holds.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - id: The row's id, in any ASCII case.
    ///   - scope: The rows the request may change.
    ///   - values: User properties, and `deleted` (the only system property a caller sets).
    ///   - condition: What the row must be for the write to happen.
    /// - Returns: The stored row, ``WriteResult/missing``, or ``WriteResult/conflict(_:)`` with
    ///   the row as it is.
    /// - Throws: The engine's error.
    func update(table: String, id: String, scope: RowScope, values: JSONObject, condition: WriteCondition) async throws -> WriteResult

    /// Removes a row, under the table's write serialisation, if `condition` holds.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - id: The row's id, in any ASCII case.
    ///   - scope: The rows the request may change.
    ///   - condition: What the row must be for the delete to happen.
    /// - Returns: ``WriteResult/written(_:)`` with the row as it was, ``WriteResult/missing``, or
    ///   ``WriteResult/conflict(_:)`` with the row as it is.
    /// - Throws: The engine's error.
    func delete(table: String, id: String, scope: RowScope, condition: WriteCondition) async throws -> WriteResult

    /// The `updatedAt` stamp of the newest hard delete in `scope` of `table` (a removed row
    /// leaves no `updatedAt` behind, so the storage records the delete's stamp, taken like any
    /// write's, in the delete's transaction), or `nil` when none was recorded. The change
    /// streams' position of a scope is the newest of this and its rows' newest `updatedAt`. The
    /// default is `nil` (a storage that records none).
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - scope: The scope (an owner's rows, or the whole shared table).
    /// - Returns: The stamp's wire text, or `nil`.
    /// - Throws: The engine's error.
    func removalStamp(of table: String, scope: RowScope) async throws -> String?

    /// The newest stamp of each of `scopes` of `table` — the newer of its rows' newest
    /// `updatedAt` and ``removalStamp(of:scope:)`` — in as few statements as the engine can: the
    /// change watchers read every scope they follow this way after the storage could not hear
    /// announcements for a while. A scope with neither is left out. The default reads each
    /// scope on its own (two statements per scope); PostgreSQL reads up to 500 scopes per
    /// statement.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - scopes: The scopes, all of the table's kind (shared, or owners of a per-user table).
    /// - Returns: The stamps' wire texts by scope.
    /// - Throws: ``TableStorageError/scopeMismatch(table:)`` for a scope of the other kind; the
    ///   engine's error.
    func newestStamps(of table: String, scopes: [RowScope]) async throws -> [RowScope: String]

    /// Releases the storage. No other call may follow.
    ///
    /// - Throws: The engine's error.
    func close() async throws

    /// Where the storage announces the changes committed to its rows — through this storage at
    /// once, and through other server instances over the same database when the engine can hear
    /// them — or `nil` when it announces none (then the server's write routes wake its change
    /// streams, and writes that bypass them are not seen). The default is `nil`.
    var changeFeed: ChangeFeed? { get }
}

/// The rows a request may see and change.
public enum RowScope: Sendable, Hashable {
    /// Every row of a shared table.
    case shared
    /// The rows of a per-user table that belong to `owner` (the identity's subject).
    case owner(String)

    /// The owner, for a per-user scope.
    public var owner: String? {
        if case .owner(let owner) = self { return owner }
        return nil
    }
}

/// A table as stored: its name, its columns and whether it is per-user.
public struct TableSchema: Sendable, Hashable {
    /// The hidden column of a per-user table that holds each row's owner. Its name cannot be a
    /// property's (a property name starts with a letter or `_`), so no request can name it.
    public static let ownerColumn = "$owner"

    /// The table's name, as stored.
    public var name: String
    /// The columns a request may name (the system columns and the item properties; never the
    /// owner column), as stored, with their types.
    public var columns: [String: ColumnType] {
        didSet { index = ColumnIndex(columns.keys) }
    }
    /// Whether the table is per-user: every row has an owner.
    public var isPerUser: Bool
    /// ``columns`` by name, matched as SQLite matches names (kept with them: every write
    /// request looks names up in it).
    private(set) var index: ColumnIndex

    /// A table's schema.
    ///
    /// - Parameters:
    ///   - name: The name, as stored.
    ///   - columns: The visible columns and their types.
    ///   - isPerUser: Whether rows have owners.
    public init(name: String, columns: [String: ColumnType], isPerUser: Bool) {
        self.name = name
        self.columns = columns
        self.isPerUser = isPerUser
        self.index = ColumnIndex(columns.keys)
    }

    /// Whether two schemas name the same table with the same columns and kind.
    ///
    /// - Parameters:
    ///   - lhs: A schema.
    ///   - rhs: Another schema.
    /// - Returns: `true` when name, columns and kind are equal.
    public static func == (lhs: TableSchema, rhs: TableSchema) -> Bool {
        lhs.name == rhs.name && lhs.columns == rhs.columns && lhs.isPerUser == rhs.isPerUser
    }

    /// Hashes the name, the columns and the kind.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(columns)
        hasher.combine(isPerUser)
    }
}

extension TableSchema {
    /// The columns of `columns` the table lacks (a name matches a column whatever the ASCII
    /// case of its letters), sorted by name, with their types.
    ///
    /// - Parameter columns: The columns a request needs.
    /// - Returns: Those to add.
    public func missingColumns(_ columns: [String: ColumnType]) -> [(name: String, type: ColumnType)] {
        var index = self.index
        return columns.sorted { $0.key < $1.key }.filter { name, _ in
            defer { index.insert(name) }
            return index.column(named: name) == nil
        }.map { (name: $0.key, type: $0.value) }
    }
}

extension TableSchema {
    /// The stored spelling of the column `name` names (whatever the ASCII case of its letters),
    /// or `nil` when the table has none; a name spelled as its column is found without folding it.
    ///
    /// - Parameter name: A property name.
    /// - Returns: The column's name as stored.
    func column(named name: String) -> String? {
        columns[name] != nil ? name : index.column(named: name)
    }

    /// Checks that the table is of the scope's kind: per-user for an owner, shared for shared.
    ///
    /// - Parameter scope: The scope of a request.
    /// - Throws: ``TableStorageError/scopeMismatch(table:)`` when it is not.
    func check(_ scope: RowScope) throws(TableStorageError) {
        guard isPerUser == (scope.owner != nil) else { throw .scopeMismatch(table: name) }
    }

    /// The properties of `values` the table can store: a `null` property without a column has
    /// nothing to store and is left out.
    func storable(_ values: JSONObject) -> JSONObject {
        values.filter { name, value in value != .null || column(named: name) != nil }
    }
}

extension RowScope {
    /// The condition that restricts a statement to the scope's rows: `"$owner" = ?` for an
    /// owner's scope, `nil` for a shared one.
    var ownerCondition: SQLFragment? {
        owner.map { "\(identifier: TableSchema.ownerColumn) = \(bind: .text($0))" }
    }
}

/// What a row must be for a conditional write to happen.
public struct WriteCondition: Sendable, Hashable {
    /// The version the row must have, or `nil` for any.
    public var version: String?
    /// Whether the row must be deleted (`true`), not deleted (`false`), or either (`nil`).
    public var deleted: Bool?

    /// A condition.
    ///
    /// - Parameters:
    ///   - version: The version the row must have, or `nil` for any.
    ///   - deleted: The deleted state the row must be in, or `nil` for either.
    public init(version: String? = nil, deleted: Bool? = nil) {
        self.version = version
        self.deleted = deleted
    }
}

/// The outcome of a write.
public enum WriteResult: Sendable, Hashable {
    /// The write happened: the row as stored (for a delete, as it was).
    case written(JSONObject)
    /// No row of the scope has the id (or the table does not exist).
    case missing
    /// The row exists but the condition did not hold (or, for an insert, the id is taken):
    /// the row as it is. Nothing was written.
    case conflict(JSONObject)
}

extension TableStorage {
    /// No feed: the storage announces nothing.
    public var changeFeed: ChangeFeed? { nil }

    /// The row as ``row(table:id:scope:)`` returns it: the transaction holds every row.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - id: The id, in any ASCII case.
    ///   - scope: The rows the request may see.
    /// - Returns: The row, or `nil`.
    /// - Throws: The engine's error.
    public func lockedRow(table: String, id: String, scope: RowScope) async throws -> JSONObject? {
        try await row(table: table, id: id, scope: scope)
    }

    /// None recorded.
    ///
    /// - Parameters:
    ///   - table: The table (unused).
    ///   - scope: The scope (unused).
    /// - Returns: `nil`.
    public func removalStamp(of table: String, scope: RowScope) async throws -> String? { nil }

    /// Each scope read on its own: its newest row's `updatedAt` through the `updatedAt` index,
    /// and ``removalStamp(of:scope:)``.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - scopes: The scopes.
    /// - Returns: The stamps by scope.
    /// - Throws: The engine's error.
    public func newestStamps(of table: String, scopes: [RowScope]) async throws -> [RowScope: String] {
        var stamps: [RowScope: String] = [:]
        for scope in scopes {
            stamps[scope] = try await ChangeReads.fullState(of: table, scope: scope, self).updatedAt
        }
        return stamps
    }

    /// Runs `body` as it is: each write is its own transaction (an engine without batch
    /// transactions).
    ///
    /// - Parameter body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func inTransaction<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await body()
    }

    /// Runs ``inTransaction(_:)``: each write reads and writes its row itself.
    ///
    /// - Parameters:
    ///   - table: The table the writes name.
    ///   - scope: Their scope.
    ///   - ids: The ids they name.
    ///   - body: The writes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or the engine's error.
    public func inTransaction<T: Sendable>(
        table: String, scope: RowScope, ids: [String], _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await inTransaction(body)
    }
}
