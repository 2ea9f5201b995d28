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
