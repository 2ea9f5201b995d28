public import SyncWire

/// The one place that turns a `QueryDescription` into parameterised SQL, for the local store
/// and the server alike, in the ``SQLDialect`` of the engine that runs it.
///
/// Identifiers are checked against the table's columns and quoted by
/// ``SQLIdentifier/quote(_:)``; every value is a bound argument, never text in the SQL. A member
/// name finds its column the way SQLite does, without regard to ASCII case (``ColumnKey``), and
/// the SQL names the column as stored, so `$filter=Text eq 'x'` filters the column `text` and
/// `$select=Text` returns `text`. A comparison with the `id` column compares ids as the
/// dialect folds them (``SQLDialect/foldedID(_:)``).
///
/// An engine can restrict every statement to some rows (``restriction``): a condition of its
/// own, on columns the query cannot name (the owner of a per-user table, say).
public struct SQLTranslator: Sendable {
    /// The deepest expression accepted; deeper trees are refused rather than risking the stack.
    /// A run of one `and` or one `or` (`a or b or c`) counts as one level: it is written flat.
    public static let maximumDepth = 100

    /// The most values one statement binds: SQLite before 3.32 (the local store's SQLCipher
    /// 3.4.1 is SQLite 3.15) refuses more than 999 parameters.
    public static let maximumParameters = 999

    /// The deepest nesting of parentheses in a statement's SQL. SQLite before 3.46 parses a
    /// statement with a fixed stack of 100 entries and refuses deeper text ("parser stack
    /// overflow"); the most nested spellings (a call inside a comparison inside `CASE`, as
    /// `floor` is written) use about four entries per parenthesis.
    public static let maximumNesting = 20

    /// The longest SQL of one statement, in bytes: a bound for spellings that repeat an operand
    /// (`floor` writes its operand five times), whose size grows exponentially when nested.
    public static let maximumLength = 256 * 1024

    /// The table queried.
    public let table: String
    /// The table's columns (stored spellings) and their types.
    public let columns: [String: ColumnType]
    /// The engine's dialect.
    public let dialect: any SQLDialect
    /// A condition every statement ANDs in first, written by the engine; `nil` for none.
    public let restriction: SQLFragment?
    /// The stored spellings of `columns`.
    private let index: ColumnIndex

    /// A translator for queries of one table.
    ///
    /// - Parameters:
    ///   - table: The table, as stored.
    ///   - columns: Its columns, as stored, with their types.
    ///   - dialect: The engine's dialect.
    ///   - restriction: A condition every statement (select, count, delete) ANDs in before the
    ///     query's filter, such as `"$owner" = ?`; it may name columns that are not in `columns`.
    public init(table: String, columns: [String: ColumnType], dialect: some SQLDialect = .sqlite, restriction: SQLFragment? = nil) {
        self.table = table
        self.columns = columns
        self.dialect = dialect
        self.restriction = restriction
        self.index = ColumnIndex(columns.keys)
    }

    /// `SELECT` for the query: selection, restriction AND filter AND `extraFilter`, order (with `id` as the last
    /// tie-breaker, so paging is stable), then the dialect's paging clause.
    ///
    /// - Parameters:
    ///   - query: The query; its `table` is not read (the translator's is).
    ///   - extraFilter: A filter ANDed with the query's, such as "not deleted".
    /// - Returns: The statement.
    /// - Throws: `QueryError` for an unknown column, a negative `$top`/`$skip` or a filter that
    ///   is nested too deeply, is too large once written as SQL (``maximumNesting``,
    ///   ``maximumParameters``, ``maximumLength``) or calls a function with the wrong number of
    ///   arguments.
    public func select(_ query: QueryDescription, extraFilter: FilterExpression? = nil) throws(QueryError) -> SQLStatement {
        let selection = try query.selection.map { (name) throws(QueryError) in try column(name) }
        var sql: SQLFragment = "SELECT \(inline: selection.isEmpty ? "*" : .joined(selection, separator: ", ")) FROM \(identifier: table)"
        try appendWhere(&sql, query.filter, extraFilter)
        // Ids are ordered as they compare: folded as the dialect folds them.
        let idKey = ColumnKey(SystemProperty.id)
        var terms = try query.orderBy.map { (term) throws(QueryError) -> SQLFragment in
            let sql = try column(term.member)
            return dialect.order(ColumnKey(term.member) == idKey ? dialect.foldedID(sql) : sql, ascending: term.ascending)
        }
        if !query.orderBy.contains(where: { ColumnKey($0.member) == idKey }), let id = index.column(named: SystemProperty.id) {
            terms.append(dialect.order(dialect.foldedID("\(identifier: id)"), ascending: true))
        }
        if !terms.isEmpty {
            sql.append(raw: " ORDER BY ")
            sql.append(.joined(terms, separator: ", "))
        }
        if query.top != nil || query.skip != nil {
            guard (query.top ?? 0) >= 0, (query.skip ?? 0) >= 0 else { throw QueryError("$top and $skip must not be negative") }
            sql.append(raw: " ")
            sql.append(dialect.limit(query.top, offset: query.skip))
        }
        return try checkSize(sql).statement(in: dialect)
    }

    /// `SELECT count(*)` of the rows the query's filter (AND `extraFilter`) matches, ignoring
    /// order, top and skip.
    ///
    /// - Parameters:
    ///   - query: The query; only its filter is read.
    ///   - extraFilter: A filter ANDed with the query's.
    /// - Returns: The statement.
    /// - Throws: `QueryError` when the filter cannot be translated.
    public func count(_ query: QueryDescription, extraFilter: FilterExpression? = nil) throws(QueryError) -> SQLStatement {
        var sql: SQLFragment = "SELECT count(*) FROM \(identifier: table)"
        try appendWhere(&sql, query.filter, extraFilter)
        return try checkSize(sql).statement(in: dialect)
    }

    /// `DELETE` of the rows the query's filter (AND `extraFilter`) matches.
    ///
    /// - Parameters:
    ///   - query: The query; only its filter is read.
    ///   - extraFilter: A filter ANDed with the query's.
    /// - Returns: The statement.
    /// - Throws: `QueryError` when the filter cannot be translated.
    public func delete(_ query: QueryDescription, extraFilter: FilterExpression? = nil) throws(QueryError) -> SQLStatement {
        var sql: SQLFragment = "DELETE FROM \(identifier: table)"
        try appendWhere(&sql, query.filter, extraFilter)
        return try checkSize(sql).statement(in: dialect)
    }

    /// The SQL of one filter expression.
    ///
    /// - Parameter filter: The expression.
    /// - Returns: The expression as a statement fragment with its arguments.
    /// - Throws: `QueryError` when the expression cannot be translated.
    public func expression(_ filter: FilterExpression) throws(QueryError) -> SQLStatement {
        try checkSize(translate(filter, depth: 0)).statement(in: dialect)
    }

    private func appendWhere(_ sql: inout SQLFragment, _ filters: FilterExpression?...) throws(QueryError) {
        var parts: [SQLFragment] = restriction.map { ["\($0)"] } ?? []
        for filter in filters.compactMap({ $0 }) { parts.append("\(try translate(filter, depth: 0))") }
        guard !parts.isEmpty else { return }
        sql.append(raw: " WHERE ")
        sql.append(.joined(parts, separator: " AND "))
    }

    /// The quoted stored spelling of the column `name` refers to.
    func column(_ name: String) throws(QueryError) -> SQLFragment {
        guard let stored = index.column(named: name) else { throw QueryError("unknown column '\(name.prefix(64))'") }
        return "\(identifier: stored)"
    }
}
