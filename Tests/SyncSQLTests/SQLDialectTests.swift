import SyncSQL
import SyncWire
import Testing

/// A dialect that spells things as PostgreSQL does (numbered placeholders, Boolean literals,
/// `LIMIT ALL`, `position`): the translator leaves each of these to its dialect.
struct NumberedDialect: SQLDialect {
    func placeholder(at position: Int) -> String { "$\(position)" }

    func boolean(_ value: Bool) -> SQLFragment { value ? "TRUE" : "FALSE" }

    func limit(_ limit: Int?, offset: Int?) -> SQLFragment {
        let count: SQLFragment = limit.map { SQLFragment.bind(.integer(Int64($0))) } ?? "ALL"
        return "LIMIT \(inline: count) OFFSET \(bind: .integer(Int64(offset ?? 0)))"
    }

    func call(_ function: FilterFunction, _ a: [SQLFragment]) -> SQLFragment {
        switch function {
        case .contains: return "position(lower(\(a[1])) in lower(\(a[0]))) > 0"
        case .endswith: return "right(lower(\(a[0])), length(\(a[1]))) = lower(\(a[1]))"
        default: return "\(inline: SQLFragment(raw: function.rawValue))(\(inline: .joined(a, separator: ", ")))"
        }
    }

    func foldedID(_ operand: SQLFragment) -> SQLFragment { "lower(\(operand) COLLATE \"C\")" }
}

/// The dialect seam: placeholders numbered over the whole statement, and each engine-specific
/// spelling asked of the dialect.
@Suite struct SQLDialectTests {
    let columns: [String: ColumnType] = ["id": .text, "text": .text, "done": .boolean, "n": .integer, "deleted": .boolean]

    @Test func placeholdersAreNumberedInTextOrderAcrossFilterAndPaging() throws {
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect())
        let filter = FilterExpression.binary(
            .and,
            .binary(.and, .function(.contains, [.member("text"), .literal(.string("a"))]), .binary(.eq, .member("done"), .literal(.bool(true)))),
            .binary(.gt, .member("n"), .literal(.int(3))))
        let query = QueryDescription(
            table: "t", filter: filter, orderBy: [OrderBy("n", ascending: false)], top: 10, skip: 20, selection: ["id", "text"])
        let statement = try translator.select(query, extraFilter: .binary(.eq, .member("deleted"), .literal(.bool(false))))
        #expect(
            statement.sql == #"""
                SELECT "id", "text" FROM "t" WHERE ((position(lower(($1)) in lower(("text"))) > 0) AND (("done") = (TRUE)) \#
                AND (("n") > ($2))) AND (("deleted") = (FALSE)) ORDER BY "n" DESC, lower(("id") COLLATE "C") ASC LIMIT $3 OFFSET $4
                """#)
        #expect(statement.arguments == [.text("a"), .integer(3), .integer(10), .integer(20)])
    }

    @Test func theDialectDecidesPagingWithoutALimit() throws {
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect())
        let statement = try translator.select(QueryDescription(table: "t", skip: 5))
        #expect(statement.sql == #"SELECT * FROM "t" ORDER BY lower(("id") COLLATE "C") ASC LIMIT ALL OFFSET $1"#)
        #expect(statement.arguments == [.integer(5)])
    }

    @Test func anArgumentUsedTwiceIsBoundTwiceUnderItsOwnNumbers() throws {
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect())
        let statement = try translator.expression(.function(.endswith, [.member("text"), .literal(.string("x"))]))
        #expect(statement.sql == #"right(lower(("text")), length(($1))) = lower(($2))"#)
        #expect(statement.arguments == [.text("x"), .text("x")])
    }

    @Test func countAndDeleteNumberTheirPlaceholdersToo() throws {
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect())
        let query = QueryDescription(table: "t", filter: .binary(.gt, .member("n"), .literal(.int(3))), top: 1)
        #expect(try translator.count(query).sql == #"SELECT count(*) FROM "t" WHERE (("n") > ($1))"#)
        let delete = try translator.delete(query, extraFilter: .binary(.eq, .member("done"), .literal(.bool(true))))
        #expect(delete.sql == #"DELETE FROM "t" WHERE (("n") > ($1)) AND (("done") = (TRUE))"#)
        #expect(delete.arguments == [.integer(3)])
    }

    @Test func comparisonsWithTheIDAreFoldedByTheDialectAndNothingElseIs() throws {
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect())
        let byID = try translator.expression(.binary(.eq, .member("ID"), .literal(.string("ONE"))))
        #expect(byID.sql == #"(lower(("id") COLLATE "C")) = (lower(($1) COLLATE "C"))"#)
        #expect(byID.arguments == [.text("ONE")])
        let reversed = try translator.expression(.binary(.lt, .literal(.string("b")), .member("id")))
        #expect(reversed.sql == #"(lower(($1) COLLATE "C")) < (lower(("id") COLLATE "C"))"#)
        #expect(try translator.expression(.binary(.eq, .member("text"), .literal(.string("ONE")))).sql == #"("text") = ($1)"#)
        #expect(try translator.expression(.binary(.eq, .member("id"), .literal(.null))).sql == #"("id") IS NULL"#)
        #expect(try translator.expression(.function(.tolower, [.member("id")])).sql == #"tolower("id")"#)
    }

    @Test func aRestrictionIsANDedIntoEveryStatementBeforeTheFilter() throws {
        let owner: SQLFragment = "\(identifier: "$owner") = \(bind: .text("alice"))"
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect(), restriction: owner)
        let query = QueryDescription(table: "t", filter: .binary(.gt, .member("n"), .literal(.int(3))), top: 1)
        let select = try translator.select(query)
        #expect(
            select.sql == #"SELECT * FROM "t" WHERE ("$owner" = $1) AND (("n") > ($2)) ORDER BY lower(("id") COLLATE "C") ASC LIMIT $3 OFFSET $4"#)
        #expect(select.arguments == [.text("alice"), .integer(3), .integer(1), .integer(0)])
        #expect(try translator.count(QueryDescription(table: "t")).sql == #"SELECT count(*) FROM "t" WHERE ("$owner" = $1)"#)
        #expect(try translator.delete(QueryDescription(table: "t")).arguments == [.text("alice")])
        // The restriction's column is not one a query may name.
        #expect(throws: QueryError.self) { try translator.expression(.member("$owner")) }
    }

    @Test func badQueriesAreRefusedWhateverTheDialect() {
        let translator = SQLTranslator(table: "t", columns: columns, dialect: NumberedDialect())
        #expect(throws: QueryError.self) { try translator.select(QueryDescription(table: "t", top: -1)) }
        #expect(throws: QueryError.self) { try translator.expression(.function(.contains, [.member("text")])) }
        #expect(throws: QueryError.self) { try translator.expression(.member("missing")) }
    }
}

/// SQLite's spellings, as the local store (SQLite 3.15) and the server run them.
@Suite struct SQLiteDialectTests {
    let translator = SQLTranslator(
        table: "todo", columns: ["id": .text, "text": .text, "complete": .boolean, "price": .real, "due": .text], dialect: .sqlite)

    @Test func anonymousPlaceholdersBooleansAsIntegersAndLimitMinusOne() throws {
        let query = QueryDescription(table: "todo", filter: .binary(.eq, .member("complete"), .literal(.bool(false))), skip: 5)
        let statement = try translator.select(query)
        #expect(statement.sql == #"SELECT * FROM "todo" WHERE (("complete") = (?)) ORDER BY "id" ASC LIMIT ? OFFSET ?"#)
        #expect(statement.arguments == [.integer(0), .integer(-1), .integer(5)])
    }

    @Test func functionsUseSQLiteCoreFunctionsOnly() throws {
        let contains = try translator.expression(.function(.contains, [.member("text"), .literal(.string("Mi"))]))
        #expect(contains.sql == #"instr(lower(("text")), lower((?))) > 0"#)
        #expect(contains.arguments == [.text("Mi")])
        let floor = try translator.expression(.function(.floor, [.member("price")]))
        #expect(
            floor.sql == #"""
                CASE WHEN ("price") >= 0 OR ("price") = CAST(("price") AS INTEGER) THEN CAST(("price") AS INTEGER) \#
                ELSE CAST(("price") AS INTEGER) - 1 END
                """#)
        #expect(try translator.expression(.function(.year, [.member("due")])).sql == #"CAST(strftime('%Y', ("due")) AS INTEGER)"#)
        #expect(try translator.expression(.binary(.ne, .member("text"), .literal(.null))).sql == #"("text") IS NOT NULL"#)
        #expect(try translator.expression(.unary(.not, .member("complete"))).sql == #"NOT ("complete")"#)
        // Ids fold through the id column's collation: the comparison is left as it is.
        #expect(try translator.expression(.binary(.eq, .member("id"), .literal(.string("ONE")))).sql == #"("id") = (?)"#)
    }
}
