import Foundation
import Testing

@testable import SyncClient

/// The change stream's parser, fed as a server's body arrives.
@Suite struct ServerSentEventParserTests {
    static let change = "event: change\ndata: {\"table\":\"todo\"}\n\n"

    /// An id that a `Last-Event-ID` header could not carry is ignored, as the standard ignores
    /// one with NUL: the last id that could be sent back stays the one sent on reconnecting.
    @Test(arguments: ["8\u{0}", "8\u{1}", "8\tx", "8\u{1B}[0m", "8\u{7F}"])
    func anIDNoHeaderCanCarryIsIgnored(_ hostile: String) {
        var parser = ServerSentEventParser()
        let events = parser.feed(Data(("id: 7\n" + Self.change + "id: \(hostile)\n" + Self.change).utf8))
        #expect(events.map(\.id) == ["7", "7"])
        #expect(parser.lastEventID == "7")
    }

    @Test func idsAreKeptAcrossEventsAndPiecesAndMayBeAnyText() {
        var parser = ServerSentEventParser(lastEventID: "5")
        var events = parser.feed(Data(Self.change.utf8))
        for piece in ["id: 6-é", "\r\n" + Self.change, "id\n" + Self.change] { events += parser.feed(Data(piece.utf8)) }
        #expect(events.map(\.id) == ["5", "6-é", ""])
        #expect(events.map(\.data) == Array(repeating: "{\"table\":\"todo\"}", count: 3))
        #expect(parser.lastEventID == "")
    }
}
