public import SyncSQL
public import SyncWire

/// Where the server keeps its tables. The controller and the table service never see SQL; an
/// engine implements this protocol and writes its queries with `SQLTranslator` in its own
/// `SQLDialect` (``SQLiteTableStorage`` in SQLite's; PostgreSQL next).
///
/// Rows are JSON objects that include the system columns. Every conditional write is atomic in
/// the engine, so concurrent requests cannot both win.
public protocol TableStorage: Sendable {
    /// The columns of `table`, or `nil` when it was never written.
    func columns(of table: String) async throws -> [String: ColumnType]?
    /// Creates `table` (with the system columns) or adds the columns it lacks.
    func ensureColumns(_ table: String, _ columns: [String: ColumnType]) async throws
    /// The rows a query matches, with `extraFilter` ANDed in.
    func select(_ query: QueryDescription, extraFilter: FilterExpression?) async throws -> [JSONObject]
    /// The number of rows a query's filter matches, ignoring top and skip.
    func count(_ query: QueryDescription, extraFilter: FilterExpression?) async throws -> Int
    /// The row with `id`, deleted or not.
    func row(table: String, id: String) async throws -> JSONObject?
    /// Inserts a row; `false` when its id exists already.
    func insert(table: String, row: JSONObject) async throws -> Bool
    /// Sets `values` on the row with `id` if its version is still `version`; `false` otherwise.
    func update(table: String, id: String, version: String, values: JSONObject) async throws -> Bool
    /// Removes the row with `id` if its version is still `version`; `false` otherwise.
    func delete(table: String, id: String, version: String) async throws -> Bool
    /// Releases the storage.
    func close() async throws
}
