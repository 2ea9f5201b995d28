import SyncSQL
import SyncSQLite
import SyncWire
import Testing

/// The translator writes only SQL that SQLCipher's SQLite 3.15 (the oldest engine it writes
/// for) prepares and binds.
@Suite struct TranslatedSQLTests {
    static let columns: [String: ColumnType] = ["id": .text, "text": .text, "n": .integer, "price": .real, "done": .boolean, "deleted": .boolean]

    /// Each way to nest an expression in another: prefix operators, either side of every binary
    /// operator, and every argument of every function.
    static let nestings: [(name: String, wrap: @Sendable (FilterExpression) -> FilterExpression)] = {
        var nestings: [(name: String, wrap: @Sendable (FilterExpression) -> FilterExpression)] = [
            ("not", { .unary(.not, $0) }), ("negate", { .unary(.negate, $0) }),
        ]
        for op in BinaryOperator.allCases {
            nestings.append(("\(op) left", { .binary(op, $0, .member("n")) }))
            nestings.append(("\(op) right", { .binary(op, .member("n"), $0) }))
        }
        for function in FilterFunction.allCases {
            for position in 0..<function.arity.upperBound {
                nestings.append(
                    (
                        "\(function) argument \(position)",
                        { inner in
                            var arguments: [FilterExpression] = (0..<function.arity.upperBound).map { $0 == 0 ? .member("text") : .literal(.int(1)) }
                            arguments[position] = inner
                            return .function(function, arguments)
                        }
                    ))
            }
        }
        return nestings
    }()

    /// Found by `fuzz-query`: 48 nested `not` translated to SQL that SQLite refused ("parser
    /// stack overflow"). At every depth of every nesting, the translator now either refuses the
    /// filter with a `QueryError` or writes a statement SQLite prepares and binds.
    @Test(arguments: nestings.map(\.name))
    func everyNestingPreparesOrIsRefused(_ name: String) throws {
        let wrap = try #require(Self.nestings.first { $0.name == name }?.wrap)
        let db = try Connection.open(path: ":memory:", mode: .readWriteCreate)
        defer { db.close() }
        let definitions = Self.columns.keys.sorted().map { "\(SQLIdentifier.quote($0)) \(Self.columns[$0]?.rawValue ?? "")" }
        try db.execute("CREATE TABLE \"t\" (\(definitions.joined(separator: ", ")))")
        let translator = SQLTranslator(table: "t", columns: Self.columns)
        let hideDeleted = FilterExpression.binary(.eq, .member("deleted"), .literal(.bool(false)))
        var expression = FilterExpression.member("text")
        var deepestPrepared = 0
        for depth in 1...60 {
            expression = wrap(expression)
            let statements: [SQLStatement]
            do {
                let query = QueryDescription(table: "t", filter: expression, top: 10, skip: 5)
                statements = [
                    try translator.select(query, extraFilter: hideDeleted), try translator.count(query, extraFilter: hideDeleted),
                    try translator.delete(query),
                ]
            } catch {
                break
            }
            for statement in statements {
                let prepared = try db.prepare(statement.sql)
                try prepared.bind(statement.arguments)
            }
            deepestPrepared = depth
        }
        #expect(deepestPrepared >= 3, "a few levels of every nesting are written")
    }
}
