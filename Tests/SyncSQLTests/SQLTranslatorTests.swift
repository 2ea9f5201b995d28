import SyncSQL
import SyncWire
import Testing

/// Member names find their column as SQLite finds it, and the SQL names the column as stored.
@Suite struct SQLTranslatorColumnTests {
    let translator = SQLTranslator(table: "todo", columns: ["id": .text, "text": .text, "updatedAt": .text])

    @Test func membersDifferingOnlyByASCIICaseAreSpelledAsStored() throws {
        let query = QueryDescription(
            table: "todo", filter: .binary(.eq, .member("Text"), .literal(.string("x"))),
            orderBy: [OrderBy("UPDATEDAT", ascending: false), OrderBy("ID")], selection: ["Id", "TEXT"])
        let statement = try translator.select(query)
        #expect(statement.sql == #"SELECT "id", "text" FROM "todo" WHERE (("text") = (?)) ORDER BY "updatedAt" DESC, "id" ASC"#)
        #expect(statement.arguments == [.text("x")])
    }

    /// An inner double quote is doubled even when a combining mark follows it (Swift sees one
    /// character there, SQL a quote that would end the identifier).
    @Test func everyInnerQuoteIsDoubled() {
        #expect(SQLIdentifier.quote(#"say "hi""#) == #""say ""hi""""#)
        #expect(SQLIdentifier.quote("x\"\u{301}); DROP TABLE t; --") == "\"x\"\"\u{301}); DROP TABLE t; --\"")
    }

    @Test func onlyASCIILettersFoldAndUnknownNamesAreStillRefused() {
        let fruit = SQLTranslator(table: "fruit", columns: ["id": .text, "äpfel": .integer])
        #expect(throws: QueryError.self) { try fruit.expression(.member("Äpfel")) }
        #expect((try? fruit.expression(.member("äPFEL")))?.sql == #""äpfel""#)
        #expect(throws: QueryError.self) { try translator.expression(.member("texts")) }
    }

    @Test func columnIndexFindsTheStoredSpellingAndReportsClashes() {
        let index = ColumnIndex(["updatedAt", "Text"])
        #expect(index.column(named: "UPDATEDAT") == "updatedAt")
        #expect(index.column(named: "text") == "Text")
        #expect(index.column(named: "tex") == nil)
        #expect(ColumnIndex.clash(in: ["a", "text", "b"]) == nil)
        let clash = ColumnIndex.clash(in: ["text", "b", "Text"])
        #expect(clash?.0 == "Text" && clash?.1 == "text")
    }
}

/// The translator bounds what it writes: what an engine cannot parse or bind, and what grows
/// exponentially, is a `QueryError`, not a statement.
@Suite struct SQLTranslatorLimitTests {
    let translator = SQLTranslator(table: "t", columns: ["id": .text, "n": .integer, "price": .real, "text": .text, "done": .boolean])

    func nested(_ function: FilterFunction, _ count: Int, around inner: FilterExpression) -> FilterExpression {
        (0..<count).reduce(inner) { operand, _ in .function(function, [operand]) }
    }

    /// `floor` and `ceiling` write their operand five times, so nested calls grew as 5^n:
    /// fifteen of them in a `$filter` of 120 bytes would have taken the server's memory. The
    /// size is checked at every level, so the deepest nesting fails as early as the shallowest.
    @Test func repeatedOperandsCannotGrowWithoutBound() throws {
        for function in [FilterFunction.floor, .ceiling] {
            #expect(throws: QueryError("the filter is too large once written as SQL")) {
                try translator.expression(nested(function, 7, around: .member("price")))
            }
            #expect(throws: QueryError("the filter has too many values (at most 999 once written as SQL)")) {
                try translator.expression(nested(function, 5, around: .literal(.double(1.5))))
            }
        }
        let three = try translator.expression(nested(.floor, 3, around: .member("price")))
        #expect(three.sql.utf8.count < SQLTranslator.maximumLength && three.arguments.isEmpty)
    }

    /// A statement never binds more values than SQLite 3.15 accepts.
    @Test func aStatementBindsAtMost999Values() throws {
        let terms = (0..<SQLTranslator.maximumParameters).map { FilterExpression.binary(.eq, .member("n"), .literal(.int(Int64($0)))) }
        let filter = terms.dropFirst().reduce(terms[0]) { .binary(.or, $0, $1) }
        let statement = try translator.count(QueryDescription(table: "t", filter: filter))
        #expect(statement.arguments.count == SQLTranslator.maximumParameters)
        #expect(throws: QueryError.self) { try translator.select(QueryDescription(table: "t", filter: filter, top: 1)) }
    }

    /// Found by `fuzz-query`: 48 nested `not` translated, and SQLite 3.15 refused the SQL
    /// ("parser stack overflow"). Nesting in SQL is bounded; a run of `and` or `or` is written
    /// flat, so a long list stays one level deep however many terms it has.
    @Test func nestingIsBoundedAndRunsAreFlat() throws {
        let nots = (0..<48).reduce(FilterExpression.member("done")) { operand, _ in .unary(.not, operand) }
        #expect(throws: QueryError("the filter is nested too deeply")) { try translator.expression(nots) }
        let terms = (0..<150).map { FilterExpression.binary(.eq, .member("n"), .literal(.int(Int64($0)))) }
        let list = terms.dropFirst().reduce(terms[0]) { .binary(.or, $0, $1) }
        let statement = try translator.expression(list)
        #expect(statement.sql == terms.indices.map { _ in #"(("n") = (?))"# }.joined(separator: " OR "))
        #expect(statement.arguments == terms.indices.map { .integer(Int64($0)) })
        let mixed = FilterExpression.binary(.and, .binary(.or, .member("done"), .member("done")), .binary(.and, .member("done"), .member("done")))
        #expect(try translator.expression(mixed).sql == #"(("done") OR ("done")) AND (("done") AND ("done"))"#)
    }
}
