import SyncSQL
import SyncWire
import Testing

/// PostgreSQL's spellings, as text: what the live tests (the server suites on PostgreSQL) run.
@Suite struct PostgresDialectTests {
    let translator = SQLTranslator(
        table: "t", columns: ["id": .text, "text": .text, "n": .integer, "x": .real, "done": .boolean], dialect: .postgres)

    func sql(_ filter: FilterExpression) throws -> SQLStatement { try translator.expression(filter) }

    @Test func placeholdersBooleansAndPaging() throws {
        let query = QueryDescription(
            table: "t", filter: .binary(.eq, .member("done"), .literal(.bool(true))), orderBy: [OrderBy("n", ascending: false)], top: 10, skip: 5)
        let statement = try translator.select(query, extraFilter: .binary(.gt, .member("n"), .literal(.int(3))))
        #expect(
            statement.sql == #"""
                SELECT * FROM "t" WHERE (("done") = (TRUE)) AND (("n") > ($1)) \#
                ORDER BY "n" DESC NULLS LAST, lower(CAST(("id") AS text) COLLATE "C") ASC NULLS FIRST LIMIT $2 OFFSET $3
                """#)
        #expect(statement.arguments == [.integer(3), .integer(10), .integer(5)])
        #expect(try translator.select(QueryDescription(table: "t", skip: 2)).sql.hasSuffix("LIMIT ALL OFFSET $1"))
    }

    @Test func idsCompareAndSortFolded() throws {
        let statement = try sql(.binary(.eq, .member("ID"), .literal(.string("ONE"))))
        #expect(statement.sql == #"(lower(CAST(("id") AS text) COLLATE "C")) = (lower(CAST(($1) AS text) COLLATE "C"))"#)
        let ordered = try translator.select(QueryDescription(table: "t", orderBy: [OrderBy("id", ascending: false)]))
        #expect(ordered.sql == #"SELECT * FROM "t" ORDER BY lower(CAST(("id") AS text) COLLATE "C") DESC NULLS LAST"#)
    }

    @Test func matchingFoldsASCIIOnlyAndReadsOperandsAsText() throws {
        #expect(
            try sql(.function(.substringof, [.literal(.string("a")), .member("text")])).sql
                == #"strpos(lower(CAST(("text") AS text) COLLATE "C"), lower(CAST(($1) AS text) COLLATE "C")) > 0"#)
        #expect(
            try sql(.function(.startswith, [.member("text"), .literal(.string("a"))])).sql
                == #"starts_with(lower(CAST(("text") AS text) COLLATE "C"), lower(CAST(($1) AS text) COLLATE "C"))"#)
        let ends = try sql(.function(.endswith, [.member("text"), .literal(.string("a"))]))
        #expect(ends.sql == #"right(lower(CAST(("text") AS text) COLLATE "C"), length(CAST(($1) AS text))) = lower(CAST(($2) AS text) COLLATE "C")"#)
        #expect(ends.arguments == [.text("a"), .text("a")])
        #expect(
            try sql(.function(.indexof, [.member("text"), .literal(.string("a"))])).sql == #"strpos(CAST(("text") AS text), CAST(($1) AS text)) - 1"#)
        #expect(
            try sql(.function(.substring, [.member("text"), .literal(.int(1)), .literal(.int(2))])).sql
                == #"substr(CAST(("text") AS text), CAST(($1) AS integer) + 1, CAST(($2) AS integer))"#)
    }

    @Test func numbersRoundHalfAwayFromZeroAndDivideAsSQLite() throws {
        #expect(try sql(.function(.round, [.member("x")])).sql == #"round(CAST(("x") AS numeric))"#)
        let division = try sql(.binary(.div, .member("n"), .literal(.int(2))))
        #expect(
            division.sql == #"""
                CASE WHEN scale(CAST(("n") AS numeric)) = 0 AND scale(CAST(($1) AS numeric)) = 0 \#
                THEN div(CAST(("n") AS numeric), NULLIF(CAST(($2) AS numeric), 0)) ELSE CAST(("n") AS numeric) / NULLIF(CAST(($3) AS numeric), 0) END
                """#)
        #expect(division.arguments == [.integer(2), .integer(2), .integer(2)])
        #expect(
            try sql(.binary(.mod, .member("x"), .literal(.int(2)))).sql
                == #"CAST(trunc(CAST(("x") AS double precision)) AS bigint) % NULLIF(CAST(trunc(CAST(($1) AS double precision)) AS bigint), 0)"#)
        #expect(try sql(.binary(.add, .member("n"), .literal(.int(1)))).sql == #"("n") + ($1)"#)
    }

    @Test func timestampFieldsReadTheISOText() throws {
        let year = try sql(.function(.year, [.member("text")]))
        #expect(year.sql.hasPrefix(#"CASE WHEN CAST(("text") AS text) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T"#))
        #expect(year.sql.hasSuffix(#"THEN CAST(substr(CAST(("text") AS text), 1, 4) AS integer) END"#))
        #expect(try sql(.function(.second, [.member("text")])).sql.contains("18, 2"))
    }

    @Test func sqliteSpellingsAreUnchanged() throws {
        let sqlite = SQLTranslator(table: "t", columns: ["id": .text, "n": .integer], dialect: .sqlite)
        let statement = try sqlite.select(
            QueryDescription(table: "t", filter: .binary(.mod, .member("n"), .literal(.int(2))), orderBy: [OrderBy("n", ascending: true)]))
        #expect(statement.sql == #"SELECT * FROM "t" WHERE (("n") % (?)) ORDER BY "n" ASC, "id" ASC"#)
    }
}
