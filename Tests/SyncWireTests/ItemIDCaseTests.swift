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
}
