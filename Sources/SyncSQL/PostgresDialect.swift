public import SyncWire

/// PostgreSQL's spellings (PostgreSQL 11 or later), with the meanings ``SQLDialect`` requires —
/// which are SQLite's, so a query returns the same rows on both engines:
///
/// - Placeholders `$1`, `$2`…; Booleans `TRUE`/`FALSE`; `LIMIT ALL` when only `$skip` is set.
/// - Matching and case functions fold **ASCII letters only**, as SQLite's `lower` does:
///   `lower(x COLLATE "C")` (under the C collation PostgreSQL folds no other letter).
/// - String functions read their operands as text (`CAST(x AS text)`), as SQLite converts a
///   number it is given.
/// - `ORDER BY` puts `NULL` first ascending and last descending (SQLite's order).
/// - `div` of two integers truncates (of other numbers it is exact); `div` and `mod` by zero
///   are `NULL`; `mod` takes the integer parts of its operands.
/// - `round` is half away from zero (`round` of a `numeric`; PostgreSQL rounds a
///   `double precision` half to even).
/// - `year` … `second` read the fixed-width ISO 8601 text a timestamp is stored as
///   (`2001-02-03T04:05:06.789Z`); other text gives `NULL`, as SQLite's `strftime` does.
///
/// Text columns are expected to be declared `COLLATE "C"`, so comparisons and ordering follow
/// the bytes of the text, as SQLite's default collation does.
public struct PostgresDialect: SQLDialect {
    /// The PostgreSQL dialect.
    public init() {}

    /// `$1`, `$2`…
    public func placeholder(at position: Int) -> String { "$\(position)" }

    /// `TRUE` or `FALSE`, compared with a `boolean` column.
    public func boolean(_ value: Bool) -> SQLFragment { value ? "TRUE" : "FALSE" }

    /// `LIMIT $n OFFSET $m`, with `ALL` for no limit.
    public func limit(_ limit: Int?, offset: Int?) -> SQLFragment {
        let count: SQLFragment = limit.map { SQLFragment.bind(.integer(Int64($0))) } ?? "ALL"
        return "LIMIT \(inline: count) OFFSET \(bind: .integer(Int64(offset ?? 0)))"
    }

    /// The functions in PostgreSQL's core: `strpos`, `starts_with`, `right`, `substr`, `btrim`,
    /// `floor`, `ceil`, `round` of a `numeric`, and the ISO text read by position.
    public func call(_ function: FilterFunction, _ a: [SQLFragment]) -> SQLFragment {
        switch function {
        case .substringof: return "strpos(\(inline: folded(a[1])), \(inline: folded(a[0]))) > 0"
        case .contains: return "strpos(\(inline: folded(a[0])), \(inline: folded(a[1]))) > 0"
        case .startswith: return "starts_with(\(inline: folded(a[0])), \(inline: folded(a[1])))"
        case .endswith: return "right(\(inline: folded(a[0])), length(\(inline: text(a[1])))) = \(inline: folded(a[1]))"
        case .concat: return "\(inline: text(a[0])) || \(inline: text(a[1]))"
        case .indexof: return "strpos(\(inline: text(a[0])), \(inline: text(a[1]))) - 1"
        case .replace: return "replace(\(inline: text(a[0])), \(inline: text(a[1])), \(inline: text(a[2])))"
        case .substring:
            let start: SQLFragment = "CAST(\(a[1]) AS integer) + 1"
            if a.count == 3 { return "substr(\(inline: text(a[0])), \(inline: start), CAST(\(a[2]) AS integer))" }
            return "substr(\(inline: text(a[0])), \(inline: start))"
        case .tolower: return "lower(\(inline: text(a[0])) COLLATE \"C\")"
        case .toupper: return "upper(\(inline: text(a[0])) COLLATE \"C\")"
        case .length: return "length(\(inline: text(a[0])))"
        case .trim: return "btrim(\(inline: text(a[0])))"
        case .year: return timestampField(a[0], from: 1, length: 4)
        case .month: return timestampField(a[0], from: 6, length: 2)
        case .day: return timestampField(a[0], from: 9, length: 2)
        case .hour: return timestampField(a[0], from: 12, length: 2)
        case .minute: return timestampField(a[0], from: 15, length: 2)
        case .second: return timestampField(a[0], from: 18, length: 2)
        case .floor: return "floor(\(a[0]))"
        case .ceiling: return "ceil(\(a[0]))"
        case .round: return "round(CAST(\(a[0]) AS numeric))"
        }
    }

    /// `lower(CAST(x AS text) COLLATE "C")`: ASCII letters folded, no other; the same expression
    /// as the index that keys a table's ids, so a lookup can use it.
    public func foldedID(_ operand: SQLFragment) -> SQLFragment { folded(operand) }

    /// `x ASC NULLS FIRST` or `x DESC NULLS LAST`.
    public func order(_ column: SQLFragment, ascending: Bool) -> SQLFragment {
        "\(inline: column) \(inline: SQLFragment(raw: ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST"))"
    }

    /// `+ - *` as they are; `div` of two integers truncated, of other numbers exact, by
    /// `NULLIF(rhs, 0)`; `%` of the operands' integer parts.
    public func arithmetic(_ op: BinaryOperator, _ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment {
        switch op {
        case .div:
            // Integers divide as integers (truncated), other numbers exactly; an integer column is
            // `numeric`, so the operands' scales say which they are.
            let (l, r): (SQLFragment, SQLFragment) = ("CAST(\(lhs) AS numeric)", "CAST(\(rhs) AS numeric)")
            return """
                CASE WHEN scale(\(inline: l)) = 0 AND scale(\(inline: r)) = 0 THEN div(\(inline: l), NULLIF(\(inline: r), 0)) \
                ELSE \(inline: l) / NULLIF(\(inline: r), 0) END
                """
        case .mod: return "\(inline: integerPart(lhs)) % NULLIF(\(inline: integerPart(rhs)), 0)"
        default: return "\(lhs) \(inline: SQLFragment(raw: op.sqlSymbol)) \(rhs)"
        }
    }

    /// `CAST(x AS text)`.
    private func text(_ operand: SQLFragment) -> SQLFragment { "CAST(\(operand) AS text)" }

    /// The operand as text with its ASCII letters folded.
    private func folded(_ operand: SQLFragment) -> SQLFragment { "lower(\(inline: text(operand)) COLLATE \"C\")" }

    /// The integer part of a number (truncated towards zero), as a `bigint`.
    private func integerPart(_ operand: SQLFragment) -> SQLFragment {
        "CAST(trunc(CAST(\(operand) AS double precision)) AS bigint)"
    }

    /// The integer at `from` (1-based) of an ISO 8601 timestamp's text, `NULL` for other text.
    private func timestampField(_ operand: SQLFragment, from: Int, length: Int) -> SQLFragment {
        let pattern = "'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}'"
        return """
            CASE WHEN \(inline: text(operand)) ~ \(inline: SQLFragment(raw: pattern)) \
            THEN CAST(substr(\(inline: text(operand)), \(inline: SQLFragment(raw: "\(from), \(length)"))) AS integer) END
            """
    }
}

extension SQLDialect where Self == PostgresDialect {
    /// PostgreSQL's dialect.
    public static var postgres: PostgresDialect { PostgresDialect() }
}
