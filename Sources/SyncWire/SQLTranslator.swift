/// A value bound to a statement parameter.
public enum SQLArgument: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// SQL text with `?` placeholders and the values to bind, in order.
public struct SQLStatement: Sendable, Hashable {
    public var sql: String
    public var arguments: [SQLArgument]

    public init(_ sql: String, _ arguments: [SQLArgument] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}

/// The SQL flavour to write. SQLite covers both SQLCipher 3.4.1 (SQLite 3.15.2: no math
/// functions, no JSON1) and the server's SQLite 3.54.
public enum SQLDialect: Sendable, Hashable {
    case sqlite
}

/// The one place that turns a ``QueryDescription`` into parameterised SQL, for the local store
/// and the server alike.
///
/// Identifiers are checked against the table's columns and quoted by ``quote(_:)``; every value
/// is a bound argument, never text in the SQL. A member name finds its column the way SQLite
/// does, without regard to ASCII case (``ColumnKey``), and the SQL names the column as stored,
/// so `$filter=Text eq 'x'` filters the column `text` and `$select=Text` returns `text`.
public struct SQLTranslator: Sendable {
    /// The deepest expression accepted; deeper trees are refused rather than risking the stack.
    public static let maximumDepth = 100

    public let table: String
    public let columns: [String: ColumnType]
    public let dialect: SQLDialect
    /// The stored spellings of `columns`.
    private let index: ColumnIndex

    public init(table: String, columns: [String: ColumnType], dialect: SQLDialect = .sqlite) {
        self.table = table
        self.columns = columns
        self.dialect = dialect
        self.index = ColumnIndex(columns.keys)
    }

    /// Quotes an identifier: double quotes, inner double quotes doubled.
    public static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `SELECT` for the query: selection, filter (AND `extraFilter`), order (with `id` as the last
    /// tie-breaker, so paging is stable), `LIMIT`/`OFFSET`.
    public func select(_ query: QueryDescription, extraFilter: FilterExpression? = nil) throws(QueryError) -> SQLStatement {
        let selection = try query.selection.isEmpty ? "*" : query.selection.map { (name) throws(QueryError) in try column(name) }.joined(separator: ", ")
        var statement = SQLStatement("SELECT \(selection) FROM \(Self.quote(table))")
        try appendWhere(&statement, query.filter, extraFilter)
        var terms = try query.orderBy.map { (term) throws(QueryError) in "\(try column(term.member)) \(term.ascending ? "ASC" : "DESC")" }
        let idKey = ColumnKey(SystemProperty.id)
        if !query.orderBy.contains(where: { ColumnKey($0.member) == idKey }), let id = index.column(named: SystemProperty.id) {
            terms.append("\(Self.quote(id)) ASC")
        }
        if !terms.isEmpty { statement.sql += " ORDER BY " + terms.joined(separator: ", ") }
        if query.top != nil || query.skip != nil {
            guard (query.top ?? 0) >= 0, (query.skip ?? 0) >= 0 else { throw QueryError("$top and $skip must not be negative") }
            statement.sql += " LIMIT ? OFFSET ?"
            statement.arguments += [.integer(Int64(query.top ?? -1)), .integer(Int64(query.skip ?? 0))]
        }
        return statement
    }

    /// `SELECT count(*)` of the rows the query's filter (AND `extraFilter`) matches, ignoring
    /// order, top and skip.
    public func count(_ query: QueryDescription, extraFilter: FilterExpression? = nil) throws(QueryError) -> SQLStatement {
        var statement = SQLStatement("SELECT count(*) FROM \(Self.quote(table))")
        try appendWhere(&statement, query.filter, extraFilter)
        return statement
    }

    /// `DELETE` of the rows the query's filter (AND `extraFilter`) matches.
    public func delete(_ query: QueryDescription, extraFilter: FilterExpression? = nil) throws(QueryError) -> SQLStatement {
        var statement = SQLStatement("DELETE FROM \(Self.quote(table))")
        try appendWhere(&statement, query.filter, extraFilter)
        return statement
    }

    /// The SQL of one filter expression.
    public func expression(_ filter: FilterExpression) throws(QueryError) -> SQLStatement {
        try translate(filter, depth: 0)
    }

    private func appendWhere(_ statement: inout SQLStatement, _ filters: FilterExpression?...) throws(QueryError) {
        let present = filters.compactMap { $0 }
        guard !present.isEmpty else { return }
        var parts: [String] = []
        for filter in present {
            let fragment = try translate(filter, depth: 0)
            parts.append("(\(fragment.sql))")
            statement.arguments += fragment.arguments
        }
        statement.sql += " WHERE " + parts.joined(separator: " AND ")
    }

    /// The quoted stored spelling of the column `name` refers to.
    func column(_ name: String) throws(QueryError) -> String {
        guard let stored = index.column(named: name) else { throw QueryError("unknown column '\(name.prefix(64))'") }
        return Self.quote(stored)
    }
}
