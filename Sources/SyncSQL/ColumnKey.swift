import SyncWire

/// A column (or table) name as a key that matches every spelling SQLite takes for the same one.
///
/// SQLite compares identifiers without regard to the case of ASCII letters, so `updatedAt`,
/// `UpdatedAt` and `UPDATEDAT` name one column; it folds no other letters, so `äpfel` and
/// `Äpfel` are two columns. The key lowercases ASCII letters only and then compares as Swift
/// strings do (canonical equivalence, the rule `JSONObject` keys follow), so any two names
/// SQLite takes as one column have equal keys.
public struct ColumnKey: Sendable, Hashable {
    /// The name with its ASCII letters lowercased (and no other change): the text a database
    /// can key the name by.
    public let folded: String

    /// The key of the column name `name`.
    public init(_ name: String) {
        folded = ASCIICase.fold(name)
    }
}

/// The columns of one table, found by name the way SQLite finds them (see ``ColumnKey``).
public struct ColumnIndex: Sendable {
    private var spellings: [ColumnKey: String] = [:]

    /// An index of the column names `names`. A real table has no two names with one key; if a
    /// sequence has them anyway, the name that sorts first (by UTF-8 bytes) wins.
    public init(_ names: some Sequence<String>) {
        for name in names { insert(name) }
    }

    /// The stored spelling of the column `name` refers to, or `nil` when there is none.
    public func column(named name: String) -> String? {
        spellings[ColumnKey(name)]
    }

    /// Records the column `name`.
    public mutating func insert(_ name: String) {
        let key = ColumnKey(name)
        if let current = spellings[key], current.utf8.lexicographicallyPrecedes(name.utf8) { return }
        spellings[key] = name
    }

    /// Two of `names` that would name the same column, in sorted order, or `nil` when each
    /// names a column of its own.
    public static func clash(in names: some Sequence<String>) -> (String, String)? {
        var seen: [ColumnKey: String] = [:]
        var clashes: [(String, String)] = []
        for name in names {
            if let other = seen.updateValue(name, forKey: ColumnKey(name)) {
                clashes.append(other < name ? (other, name) : (name, other))
            }
        }
        return clashes.min { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
    }
}
