import SyncWire
import Testing

/// Ids compare as one item whatever the case of their ASCII letters, and only those.
@Suite struct ItemIDCaseTests {
    @Test func sameItemFoldsASCIILettersOnly() {
        #expect(ItemID.sameItem("ONE", "one"))
        #expect(ItemID.sameItem("a-1_B", "A-1_b"))
        #expect(!ItemID.sameItem("élan", "Élan"))
        #expect(!ItemID.sameItem("one", "one "))
        #expect(!ItemID.sameItem("e\u{301}", "\u{e9}"), "compared as code points, as the database does")
        #expect(!ItemID.sameItem("[", "{"), "only letters fold")
    }

    /// The fold lowers the 26 ASCII capitals and nothing else, agreeing with `sameItem`.
    @Test func foldLowersASCIICapitalsOnly() {
        #expect(ASCIICase.fold("AbZ-@[`{ÄÉ😀ÿ") == "abz-@[`{ÄÉ😀ÿ")
        #expect(ASCIICase.fold("E\u{301}X") == "e\u{301}x")
        #expect(ASCIICase.fold("") == "")
        let ids = ["ONE", "a-1_B", "Élan", "x\u{0}Y", "ÅNGSTRÖM", "E\u{301}", "12AB34CD-56EF-7890-ABCD-EF0123456789"]
        for id in ids {
            let folded = ASCIICase.fold(id)
            #expect(ItemID.sameItem(folded, id))
            #expect(folded.unicodeScalars.count == id.unicodeScalars.count)
            #expect(!folded.unicodeScalars.contains { ("A"..."Z").contains($0) })
            #expect(zip(folded.unicodeScalars, id.unicodeScalars).allSatisfy { $0 == $1 || $0.value == $1.value + 0x20 })
        }
    }
}
