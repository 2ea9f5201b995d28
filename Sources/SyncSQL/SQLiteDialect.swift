public import SyncWire

/// SQLite's spellings, for SQLCipher 3.4.1 (SQLite 3.15.2: no math functions, no JSON1) in the
/// local store and sqlite-nio (SQLite 3.54) in the server.
///
/// Matching ignores case by folding both sides with `lower()`, which folds ASCII letters only,
/// as SQLite's own `LIKE` and identifiers do; it uses `instr`/`substr`, not `LIKE`, so a pattern
/// needs no escaping.
public struct SQLiteDialect: SQLDialect {
    /// The SQLite dialect.
    public init() {}

    /// `?`: SQLite numbers anonymous placeholders in text order.
    public func placeholder(at position: Int) -> String { "?" }

    /// A bound 0 or 1: SQLite has no Boolean type, and a `BOOLEAN` column holds integers.
    public func boolean(_ value: Bool) -> SQLFragment { .bind(.integer(value ? 1 : 0)) }

    /// `LIMIT ? OFFSET ?`, with −1 for no limit.
    public func limit(_ limit: Int?, offset: Int?) -> SQLFragment {
        "LIMIT \(bind: .integer(Int64(limit ?? -1))) OFFSET \(bind: .integer(Int64(offset ?? 0)))"
    }

    /// The functions in SQLite 3.15's core functions: `instr`, `substr`, `strftime`; `floor` and
    /// `ceiling` by truncating with `CAST` and stepping away from zero.
    public func call(_ function: FilterFunction, _ a: [SQLFragment]) -> SQLFragment {
        let truncated: SQLFragment = "CAST(\(a[0]) AS INTEGER)"
        switch function {
        case .substringof: return "instr(lower(\(a[1])), lower(\(a[0]))) > 0"
        case .contains: return "instr(lower(\(a[0])), lower(\(a[1]))) > 0"
        case .startswith: return "substr(lower(\(a[0])), 1, length(\(a[1]))) = lower(\(a[1]))"
        case .endswith: return "(length(\(a[1])) = 0 OR substr(lower(\(a[0])), -length(\(a[1]))) = lower(\(a[1])))"
        case .concat: return "\(a[0]) || \(a[1])"
        case .indexof: return "instr(\(a[0]), \(a[1])) - 1"
        case .replace: return "replace(\(a[0]), \(a[1]), \(a[2]))"
        case .substring: return a.count == 3 ? "substr(\(a[0]), \(a[1]) + 1, \(a[2]))" : "substr(\(a[0]), \(a[1]) + 1)"
        case .tolower: return "lower(\(a[0]))"
        case .toupper: return "upper(\(a[0]))"
        case .length: return "length(\(a[0]))"
        case .trim: return "trim(\(a[0]))"
        case .year: return "CAST(strftime('%Y', \(a[0])) AS INTEGER)"
        case .month: return "CAST(strftime('%m', \(a[0])) AS INTEGER)"
        case .day: return "CAST(strftime('%d', \(a[0])) AS INTEGER)"
        case .hour: return "CAST(strftime('%H', \(a[0])) AS INTEGER)"
        case .minute: return "CAST(strftime('%M', \(a[0])) AS INTEGER)"
        case .second: return "CAST(strftime('%S', \(a[0])) AS INTEGER)"
        case .floor:
            return "CASE WHEN \(a[0]) >= 0 OR \(a[0]) = \(inline: truncated) THEN \(inline: truncated) ELSE \(inline: truncated) - 1 END"
        case .ceiling:
            return "CASE WHEN \(a[0]) <= 0 OR \(a[0]) = \(inline: truncated) THEN \(inline: truncated) ELSE \(inline: truncated) + 1 END"
        case .round: return "round(\(a[0]))"
        }
    }
}

extension SQLiteDialect {
    /// The operand unchanged: the `id` column of a table whose ids fold is `COLLATE NOCASE`
    /// (ASCII letters folded), and SQLite compares with the column's collation.
    public func foldedID(_ operand: SQLFragment) -> SQLFragment { operand }
}

extension SQLDialect where Self == SQLiteDialect {
    /// SQLite's dialect.
    public static var sqlite: SQLiteDialect { SQLiteDialect() }
}
