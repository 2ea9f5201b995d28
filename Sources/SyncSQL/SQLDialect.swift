public import SyncWire

/// What one SQL engine spells its own way, in one place: the ``SQLTranslator`` writes the rest
/// (selection, `WHERE`, comparison and arithmetic operators, `IS NULL`, `ORDER BY`) the same for
/// every engine, and asks the dialect for each of these.
///
/// Support for an engine is one type conforming to this protocol: ``SQLiteDialect`` for SQLite
/// (the local store's SQLCipher and the server's sqlite-nio); a PostgreSQL dialect fills in the
/// same requirements in ``PostgresDialect`` (`$1` placeholders, `TRUE`/`FALSE`, `LIMIT ALL`,
/// `strpos`, `NULLS FIRST`).
///
/// The meaning each spelling must have is the protocol's, not the engine's (see each
/// requirement), so a query returns the same rows on every engine.
public protocol SQLDialect: Sendable {
    /// The placeholder of the parameter at `position`: `?` in SQLite, `$1`, `$2`… in PostgreSQL.
    ///
    /// - Parameter position: The parameter's position in the statement, from 1.
    /// - Returns: The placeholder text.
    func placeholder(at position: Int) -> String

    /// A Boolean constant, compared with a column holding ``ColumnType/boolean``.
    ///
    /// - Parameter value: The constant.
    /// - Returns: Its SQL: a bound value or a literal.
    func boolean(_ value: Bool) -> SQLFragment

    /// The clause that pages a query (`$top`, `$skip`), appended after `ORDER BY`. Called only
    /// when at least one is set; both are checked not to be negative.
    ///
    /// - Parameters:
    ///   - limit: The most rows to return, or `nil` for no limit.
    ///   - offset: The rows to skip, or `nil` for none.
    /// - Returns: The clause, such as `LIMIT ? OFFSET ?`.
    func limit(_ limit: Int?, offset: Int?) -> SQLFragment

    /// A call of a filter function, its arguments already translated (their count checked
    /// against `FilterFunction/arity`).
    ///
    /// The meanings, as in the Mobile Apps OData grammar:
    /// - `substringof(p, s)`, `contains(s, p)`, `startswith(s, p)`, `endswith(s, p)` compare
    ///   **without regard to case** (letters of both sides folded alike). A dialect that spells
    ///   them with `LIKE` must escape `%`, `_` and its escape character in `p`, which is any
    ///   expression (a bound string or a column).
    /// - `indexof(s, p)` is 0-based (−1 when absent); `substring(s, start[, length])` takes a
    ///   0-based start; `length`, `trim`, `tolower`, `toupper`, `concat`, `replace` as usual.
    /// - `year` … `second` read a timestamp stored as fixed-width ISO 8601 text (UTC).
    /// - `floor`, `ceiling`, `round` (half away from zero) of a number.
    ///
    /// - Parameters:
    ///   - function: The function.
    ///   - arguments: The translated arguments, in order; interpolate each as an operand.
    /// - Returns: The call's SQL; an argument used twice is bound twice.
    func call(_ function: FilterFunction, _ arguments: [SQLFragment]) -> SQLFragment

    /// An operand of a comparison (`eq ne gt ge lt le`) with the `id` column, spelled so that
    /// ids compare **without regard to the case of ASCII letters** (and of no other letters):
    /// `id eq 'ONE'` finds `one`. Both operands of such a comparison are passed through it, and
    /// so is the `id` column in `ORDER BY` (ids sort as they compare).
    ///
    /// SQLite returns the operand unchanged: a table whose ids fold declares its `id` column
    /// `COLLATE NOCASE`, which folds ASCII letters only, and SQLite compares with the column's
    /// collation (and can use its key). PostgreSQL spells `lower((x) COLLATE "C")` (under the C
    /// collation `lower` folds ASCII letters only), matching an index on the same expression.
    ///
    /// - Parameter operand: The translated operand (the column or the other side).
    /// - Returns: The operand as compared.
    func foldedID(_ operand: SQLFragment) -> SQLFragment

    /// A term of `ORDER BY`: the column and its direction, with `NULL` ordered as **the least
    /// value** (first ascending, last descending), as SQLite orders it.
    ///
    /// - Parameters:
    ///   - column: The quoted column.
    ///   - ascending: The direction.
    /// - Returns: The term, such as `"n" DESC`.
    func order(_ column: SQLFragment, ascending: Bool) -> SQLFragment

    /// An arithmetic operation (`add sub mul div mod`), its operands already translated, with
    /// SQLite's meanings: `div` of two integers truncates, and a division or remainder by zero
    /// is `NULL`; `mod` takes both operands' integer parts (`5.5 mod 2` is 1) and its sign is
    /// the dividend's.
    ///
    /// - Parameters:
    ///   - op: One of `add`, `sub`, `mul`, `div`, `mod`.
    ///   - lhs: The left operand.
    ///   - rhs: The right operand.
    /// - Returns: The operation's SQL.
    func arithmetic(_ op: BinaryOperator, _ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment
}

extension SQLDialect {
    /// `column ASC` or `column DESC`: engines that order `NULL` as the least value need no more.
    public func order(_ column: SQLFragment, ascending: Bool) -> SQLFragment {
        "\(inline: column) \(inline: SQLFragment(raw: ascending ? "ASC" : "DESC"))"
    }

    /// `lhs op rhs` with the operator's usual symbol, for engines whose operators already have
    /// SQLite's meanings.
    public func arithmetic(_ op: BinaryOperator, _ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment {
        "\(lhs) \(inline: SQLFragment(raw: op.sqlSymbol)) \(rhs)"
    }
}

extension BinaryOperator {
    /// The operator's SQL symbol: `=`, `<>`, `+`, `AND`…
    var sqlSymbol: String {
        switch self {
        case .or: return "OR"
        case .and: return "AND"
        case .eq: return "="
        case .ne: return "<>"
        case .gt: return ">"
        case .ge: return ">="
        case .lt: return "<"
        case .le: return "<="
        case .add: return "+"
        case .sub: return "-"
        case .mul: return "*"
        case .div: return "/"
        case .mod: return "%"
        }
    }
}
