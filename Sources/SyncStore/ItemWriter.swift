import SyncSQL
import SyncSQLite
import SyncWire

/// Writes a batch of items into one table: each row one `INSERT OR IGNORE`, and an `UPDATE` of
/// the columns the item names only when a row with its id was already there, so a property an
/// item lacks keeps its local value (after a row that was there, the `UPDATE` is tried first and
/// the `INSERT` only when it changed nothing).
///
/// A batch is planned once, not row by row: each spelling of a property name is matched to its
/// column (whatever its ASCII case) the first time it is seen, and items naming the same
/// columns share one pair of prepared statements, bound with the same values (`?1` is the id in
/// both). ``check(_:)`` refuses a bad batch before anything is written.
struct ItemWriter {
    /// The two statements of one set of columns.
    private struct Statements {
        let insert: Statement
        let update: Statement?
    }

    /// One name per ASCII-case-folded name seen, numbered in order of first sight.
    private var keys: [ColumnKey: Int] = [:]
    /// The number of each spelling seen (the key of `id` is number 0, of `deleted` number 1: the
    /// protocol's flag is never stored).
    private var numbers: [String: Int] = [:]
    /// The column of each number once looked up (its stored spelling and its place among the
    /// table's columns by name); `.some(nil)` for `id` and a name without a column.
    private var columnOfNumber: [(name: String, rank: Int)??] = []
    private var statements: [[Int]: Statements] = [:]
    /// The number of each property of the items last checked, item after item, each item's in
    /// the order it lists them: ``write(_:table:columns:in:)`` reads its numbers here instead of
    /// looking every name up again (a dictionary lists its members in the same order each time).
    private var checkedNumbers: [Int] = []
    private var checkedItems = 0

    init() {
        keys = [ColumnKey(SystemProperty.id): 0, ColumnKey(SystemProperty.deleted): 1]
    }

    /// The number of distinct property names (spellings) of the items checked so far.
    var spellingCount: Int { numbers.count }

    /// Checks every item: a valid string id, and no two properties naming one column.
    /// - Throws: ``StoreError/invalidItem(_:)``.
    mutating func check(_ items: [JSONObject]) throws {
        var seen: [Int] = []
        checkedNumbers.removeAll(keepingCapacity: true)
        checkedItems = 0
        for item in items {
            guard case .string(let id)? = item[SystemProperty.id], ItemID.isValid(id) else {
                throw StoreError.invalidItem("every item needs a valid string id")
            }
            seen.removeAll(keepingCapacity: true)
            for name in item.keys { seen.append(number(of: name)) }
            checkedNumbers.append(contentsOf: seen)
            seen.sort()
            if seen.indices.dropFirst().contains(where: { seen[$0] == seen[$0 - 1] }) {
                // The general check names the two properties in its error.
                try StoreSession.checkDistinctNames(item.keys, of: "properties")
            }
        }
        checkedItems = items.count
    }

    /// Writes `items`, the items last given to ``check(_:)``, into `table`, whose columns are
    /// `columns`; a property without a column is left out.
    /// - Throws: SQLite's errors; ``StoreError/invalidItem(_:)`` for a value that cannot be
    ///   stored.
    mutating func write(_ items: [JSONObject], table: String, columns: [String: ColumnType], in session: StoreSession) throws {
        guard checkedItems == items.count else { throw StoreError.invalidItem("the items were not checked before they were written") }
        let sorted = columns.keys.sorted()
        let index = ColumnIndex(sorted)
        let ranks = Dictionary(uniqueKeysWithValues: sorted.enumerated().map { ($0.element, $0.offset) })
        var arguments: [SQLValue] = []
        var pairs: [(number: Int, column: String, rank: Int, value: JSONValue)] = []
        var signature: [Int] = []
        var current: Statements?
        var currentSignature: [Int] = []
        var position = 0
        var rowsExist = false
        for item in items {
            pairs.removeAll(keepingCapacity: true)
            signature.removeAll(keepingCapacity: true)
            var id: String?
            for (name, value) in item {
                let number = checkedNumbers[position]
                position += 1
                if number == 0, case .string(let text) = value { id = text }
                guard let column = column(of: number, name: name, in: index, ranks: ranks) else { continue }
                pairs.append((number, column.name, column.rank, value))
            }
            guard let id else { continue }
            // Columns in one order whatever the item's: sorted by their stored spelling.
            pairs.sort { $0.rank < $1.rank }
            for pair in pairs { signature.append(pair.number) }
            if current == nil || signature != currentSignature {
                current = try statements(for: signature, columns: pairs.map(\.column), table: table, session: session)
                currentSignature = signature
            }
            guard let current else { continue }
            arguments.removeAll(keepingCapacity: true)
            arguments.append(.text(id))
            for pair in pairs { arguments.append(try SQLValue(json: pair.value)) }
            // The row before was there already (the server's answers to a push, a pull's changes):
            // this one likely is too, so its `UPDATE` goes first.
            if rowsExist, let update = current.update {
                try update.run(arguments)
                if session.connection.changes > 0 { continue }
                try current.insert.run(arguments)
                rowsExist = false
            } else {
                try current.insert.run(arguments)
                rowsExist = session.connection.changes == 0
                if rowsExist, let update = current.update { try update.run(arguments) }
            }
        }
    }

    /// The number of the column `name` names, given on first sight of its folded form.
    private mutating func number(of name: String) -> Int {
        if let known = numbers[name] { return known }
        let key = ColumnKey(name)
        let number = keys[key] ?? keys.count
        keys[key] = number
        numbers[name] = number
        return number
    }

    /// The column of number `number` (`name` is one of its spellings), or `nil` for `id`,
    /// `deleted` and a name without a column.
    private mutating func column(
        of number: Int, name: String, in index: ColumnIndex, ranks: [String: Int]
    ) -> (name: String, rank: Int)? {
        guard number > 1 else { return nil }
        while columnOfNumber.count <= number { columnOfNumber.append(.none) }
        if case .some(let column) = columnOfNumber[number] { return column }
        var column: (name: String, rank: Int)?
        if let stored = index.column(named: name), let rank = ranks[stored] { column = (stored, rank) }
        columnOfNumber[number] = .some(column)
        return column
    }

    /// The prepared statements for items naming `columns` (their numbers are `signature`).
    private mutating func statements(
        for signature: [Int], columns: [String], table: String, session: StoreSession
    ) throws -> Statements {
        if let prepared = statements[signature] { return prepared }
        let prepared = Statements(
            insert: try session.statement(StoreSQL.insertIgnoringExisting(table, columns: columns)),
            update: columns.isEmpty ? nil : try session.statement(StoreSQL.updateByFirstArgument(table, columns: columns)))
        statements[signature] = prepared
        return prepared
    }
}
