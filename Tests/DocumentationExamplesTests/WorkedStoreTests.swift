import CipherSync
import CipherSyncStoreConformance
import Testing

/// The worked example of the store-author article (`NotesStore`, compiled from the article into
/// Examples.swift) does what the article says: it passes every check of the conformance suite but
/// the one that asks for the query model's functions and arithmetic.
@Suite struct WorkedStoreTests {
    @Test func theArticlesStoreFailsOnlyTheFilterCheck() async {
        let failures = await notesStoreFailures()
        #expect(Set(failures.map(\.check)) == ["filters compare as SQL does"], "\(failures)")
    }
}
