import FuzzSupport
import Foundation
import SyncSQL
import SyncSQLite
import SyncWire

/// The executable's entry point (SwiftPM links `main` to this name): libFuzzer's driver.
@_cdecl("fuzz_query_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}

/// libFuzzer's entry point for the query path of `GET /tables/{table}` and of local reads.
///
/// The input is query options, one a line: `$filter=…`, `$orderby=…`, `$select=…`, `$top=…`,
/// `$skip=…`, `$inlinecount=…`, `__includeDeleted=…` (a line that does not start with `$` or
/// `__` and an `=` is a whole `$filter`). Properties checked on every input:
/// - the parser returns a request or throws a `QueryError`; it never crashes or hangs;
/// - printed again (`ODataQuery.queryItems(for:)`, as the client sends a query), the query
///   parses to an equal query, and percent-encoding its items decodes back to them;
/// - when the translator accepts the query, each statement (select, count, delete) names only
///   the table and its columns, has exactly one bound value per `?`, and SQLite (SQLCipher's
///   SQLite 3.15, the oldest engine the translator writes for) prepares it and binds its values.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let items = queryItems(FuzzInput.text(data, size))
    let request: ODataParser.Request
    do {
        request = try ODataParser.parseRequest(table: Fixture.table, queryItems: items)
    } catch {
        return 0
    }
    checkPrintedForm(of: request.query)
    checkTranslation(of: request.query, extraFilter: request.includeDeleted ? nil : Fixture.hideDeleted)
    return 0
}

/// The query items of the input: `name=value` lines, or a whole `$filter`.
private func queryItems(_ text: String) -> [(name: String, value: String)] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        guard line.hasPrefix("$") || line.hasPrefix("__"), let equals = line.firstIndex(of: "=") else { return ("$filter", String(line)) }
        return (String(line[..<equals]), String(line[line.index(after: equals)...]))
    }
}

/// The query a client would send for `query` parses back to `query`.
private func checkPrintedForm(of query: QueryDescription) {
    let printed = ODataQuery.queryItems(for: query)
    do {
        let reparsed = try ODataParser.parseRequest(table: Fixture.table, queryItems: printed)
        invariant(reparsed.query == query, "the printed query \(printed) parses to \(reparsed.query), not \(query)")
    } catch {
        invariant(false, "the printed query \(printed) does not parse: \(error)")
    }
    // Percent-encoded as in a URL, the items decode back unchanged.
    let encoded = ODataQuery.string(printed)
    let decoded: [String] = encoded.isEmpty ? [] : encoded.split(separator: "&", omittingEmptySubsequences: false).map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.removingPercentEncoding }
        return parts.count == 2 ? "\(parts[0] ?? "?")=\(parts[1] ?? "?")" : "?"
    }
    let expected: [String] = printed.map { "\($0.name)=\($0.value)" }
    invariant(decoded == expected, "percent-encoding \(printed) gives \(encoded)")
}

/// Every statement the translator makes of `query` is well formed for SQLite.
private func checkTranslation(of query: QueryDescription, extraFilter: FilterExpression?) {
    let statements: [SQLStatement]
    do {
        statements = [
            try Fixture.translator.select(query, extraFilter: extraFilter),
            try Fixture.translator.count(query, extraFilter: extraFilter),
            try Fixture.translator.delete(query, extraFilter: extraFilter),
        ]
    } catch {
        return  // an unknown column, too deep, a wrong argument count: a QueryError, as promised
    }
    for statement in statements {
        let scan = SQLScan(statement.sql)
        invariant(scan.isComplete, "unterminated quote in \(statement.sql)")
        invariant(scan.placeholders == statement.arguments.count, "\(scan.placeholders) placeholders, \(statement.arguments.count) values: \(statement.sql)")
        invariant(scan.identifiers.isSubset(of: Fixture.names), "unexpected identifiers \(scan.identifiers.subtracting(Fixture.names)) in \(statement.sql)")
        do {
            let prepared = try Fixture.database.prepare(statement.sql)
            try prepared.bind(statement.arguments)
        } catch {
            invariant(false, "SQLite refuses \(statement.sql): \(error)")
        }
    }
}

/// The table queried: one column of every `ColumnType`, and the system columns.
private enum Fixture {
    static let table = "fuzz"
    static let columns: [String: ColumnType] = [
        "id": .text, "text": .text, "n": .integer, "price": .real, "done": .boolean, "tags": .json,
        "createdAt": .text, "updatedAt": .text, "version": .text, "deleted": .boolean,
    ]
    static let names = Set(columns.keys).union([table])
    static let translator = SQLTranslator(table: table, columns: columns, dialect: .sqlite)
    /// The server's filter for reads without `__includeDeleted`.
    static let hideDeleted = FilterExpression.binary(.eq, .member("deleted"), .literal(.bool(false)))

    /// An in-memory SQLCipher database with the table, used from libFuzzer's one thread only.
    nonisolated(unsafe) static let database: Connection = {
        do {
            let connection = try Connection.open(path: ":memory:", mode: .readWriteCreate)
            let definitions = columns.sorted { $0.key < $1.key }.map { "\(SQLIdentifier.quote($0.key)) \($0.value.rawValue)" }
            try connection.execute("CREATE TABLE \(SQLIdentifier.quote(table)) (\(definitions.joined(separator: ", ")))")
            return connection
        } catch {
            fatalError("cannot create the fixture database: \(error)")
        }
    }()
}

/// What an SQL text holds outside its string literals: `?` placeholders and the names of its
/// quoted identifiers.
private struct SQLScan {
    var placeholders = 0
    var identifiers: Set<String> = []
    var isComplete = true

    init(_ sql: String) {
        var scalars = sql.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "?": placeholders += 1
            case "'", "\"":
                var name = String.UnicodeScalarView()
                var closed = false
                while let next = scalars.popFirst() {
                    if next == scalar {
                        if scalars.first == scalar {
                            scalars.removeFirst()
                        } else {
                            closed = true
                            break
                        }
                    }
                    name.append(next)
                }
                isComplete = isComplete && closed
                if scalar == "\"" { identifiers.insert(String(name)) }
            default: continue
            }
        }
    }
}
