import Foundation

/// One server-sent event (the text/event-stream format of the HTML standard).
struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field; `message` when the event named none.
    var name: String = "message"
    /// The `data:` lines, joined by newlines.
    var data: String = ""
    /// The `id:` of this event, or of the last event before it that had one.
    var id: String?
}

/// Reads server-sent events from the bytes of a response as they arrive: lines end with LF, CR
/// LF or CR; a blank line ends an event; lines starting with `:` are comments (keep-alives);
/// fields are `event`, `data`, `id` and `retry` (others are ignored).
struct ServerSentEventParser {
    private var buffer: [UInt8] = []
    private var lastCarriageReturn = false
    private var event = ServerSentEvent()
    private var hasData = false
    /// The last event id received (kept across events, sent back as `Last-Event-ID`).
    private(set) var lastEventID: String?
    /// The reconnection delay the server asked for, in milliseconds.
    private(set) var retry: Int?

    init(lastEventID: String? = nil) {
        self.lastEventID = lastEventID
    }

    /// Feeds a piece of the body; returns the events it completed.
    mutating func feed(_ data: Data) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in data {
            if lastCarriageReturn {
                lastCarriageReturn = false
                if byte == 0x0A { continue }  // CR LF is one line end
            }
            switch byte {
            case 0x0A, 0x0D:
                lastCarriageReturn = byte == 0x0D
                if let completed = line(String(decoding: buffer, as: UTF8.self)) { events.append(completed) }
                buffer.removeAll(keepingCapacity: true)
            default:
                buffer.append(byte)
            }
        }
        return events
    }

    private mutating func line(_ line: String) -> ServerSentEvent? {
        if line.isEmpty {
            defer {
                event = ServerSentEvent()
                hasData = false
            }
            guard hasData else { return nil }
            var completed = event
            completed.id = lastEventID
            return completed
        }
        if line.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = line[...]
            value = ""
        }
        switch field {
        case "event": event.name = String(value)
        case "data":
            event.data += hasData ? "\n" + value : String(value)
            hasData = true
        // An id with NUL is ignored, as the standard says, and one with any other control
        // character too: the id goes back in a `Last-Event-ID` header, which cannot carry one
        // (every reconnection would fail as it was written).
        case "id" where ServiceConnection.fitsInAHeader(value): lastEventID = String(value)
        case "retry": if let milliseconds = Int(value), milliseconds >= 0 { retry = milliseconds }
        default: break
        }
        return nil
    }
}
