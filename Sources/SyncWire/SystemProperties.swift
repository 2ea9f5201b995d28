public import Foundation

/// The system properties of the Mobile Apps (G2) protocol: the server owns them.
public enum SystemProperty {
    /// The item's id: any string the client chooses, one item whatever its ASCII case.
    public static let id = "id"
    /// When the server first stored the item.
    public static let createdAt = "createdAt"
    /// When the server last changed the item: the order of incremental pulls.
    public static let updatedAt = "updatedAt"
    /// The server's opaque version of the item, sent back in `If-Match`.
    public static let version = "version"
    /// Whether the item is soft-deleted on the server.
    public static let deleted = "deleted"

    /// The properties a client strips from request bodies (`version` travels in `If-Match`).
    public static let all: [String] = [createdAt, updatedAt, version, deleted]

    /// The properties a server refuses in a request body (compared case-insensitively).
    public static let reserved: [String] = [createdAt, updatedAt, deleted]
}

/// Header and query names of the wire protocol.
public enum WireHeader {
    /// The header (or query parameter) naming the protocol version.
    public static let apiVersion = "ZUMO-API-VERSION"
    /// The protocol version spoken here (G2).
    public static let apiVersionValue = "2.0.0"
    /// The header naming the client features in use (`OL` offline, `TT` typed table, …).
    public static let features = "X-ZUMO-FEATURES"
    /// The header naming the client SDK and its version.
    public static let sdkVersion = "X-ZUMO-VERSION"
    /// The header carrying the app installation's id.
    public static let installationID = "X-ZUMO-INSTALLATION-ID"
    /// The header carrying the sign-in token.
    public static let auth = "X-ZUMO-AUTH"
    /// The header of a conditional update, delete or undelete.
    public static let ifMatch = "If-Match"
    /// The header carrying an item's version.
    public static let eTag = "ETag"
    /// The header pointing at the next page of a list.
    public static let link = "Link"
    /// The query parameter that asks for soft-deleted rows.
    public static let includeDeleted = "__includeDeleted"
    /// The header of an attachment's content route naming an offset: in a `HEAD` answer, the
    /// bytes the server holds; in a `PATCH`, where its body starts.
    public static let uploadOffset = "Upload-Offset"
    /// The header of a `HEAD` answer of an attachment's content route naming the content's whole
    /// length (the metadata row's `size`).
    public static let uploadLength = "Upload-Length"
    /// The content type of a `PATCH` body of an attachment's content route.
    public static let offsetOctetStream = "application/offset+octet-stream"
}

/// Item ids: strings, checked the same way by the client (before queuing) and the server.
public enum ItemID {
    /// The characters an id may not contain, besides control characters.
    static let forbidden: Set<Character> = ["\"", "+", "?", "\\", "/", "`"]

    /// Whether `id` is a valid item id: 1–255 characters, no control characters, none of
    /// `" + ? \ / ` + "`" + `, and not `.` or `..`.
    public static func isValid(_ id: String) -> Bool {
        if let verdict = asciiVerdict(id) { return verdict }
        guard !id.isEmpty, id.count <= 255, id != ".", id != ".." else { return false }
        for scalar in id.unicodeScalars {
            if scalar.properties.generalCategory == .control { return false }
        }
        return !id.contains(where: { forbidden.contains($0) })
    }

    /// The key under which `id` names its item: ids that differ only in the case of ASCII letters
    /// name one item (as SQL Server compares them behind the original backends, and as SQLite's
    /// `NOCASE` does); other letters are compared as they are.
    /// - Parameter id: an item id.
    /// - Returns: the id with its ASCII capitals lowercased (`ASCIICase.fold(_:)`).
    public static func key(_ id: String) -> String {
        ASCIICase.fold(id)
    }

    /// ``isValid(_:)`` for an id of ASCII characters only, byte by byte (each is one character,
    /// and the only control characters are U+0000–U+001F and U+007F); `nil` for another id.
    private static func asciiVerdict(_ id: String) -> Bool? {
        var id = id
        return id.withUTF8 { bytes -> Bool? in
            var valid = true
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                switch byte {
                case 0x00...0x1F, 0x7F, UInt8(ascii: "\""), UInt8(ascii: "+"), UInt8(ascii: "?"), UInt8(ascii: "\\"), UInt8(ascii: "/"),
                    UInt8(ascii: "`"):
                    valid = false
                default:
                    break
                }
            }
            let dots = bytes.count <= 2 && bytes.allSatisfy { $0 == UInt8(ascii: ".") }
            return valid && !bytes.isEmpty && bytes.count <= 255 && !dots
        }
    }

    /// A new id for an item inserted without one: a lowercase hyphenated random (version 4) UUID.
    /// Its bits come from the system's generator (`getrandom`): Foundation's `UUID()` opens,
    /// reads and closes `/dev/urandom` on every call here, three system calls per insert.
    public static func generate() -> String {
        var random = SystemRandomNumberGenerator()
        var bytes = (random.next() as UInt64, random.next() as UInt64)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40  // version 4
            raw[8] = raw[8] & 0x3F | 0x80  // the RFC 4122 variant
            return UUID(uuid: raw.load(as: uuid_t.self)).uuidString.lowercased()
        }
    }
}

/// Timestamps on the wire: ISO 8601, UTC, millisecond precision (`2001-02-03T04:05:06.789Z`).
/// Fixed-width text, so text order is time order: stores compare these strings directly.
/// The text is read and written directly (see ``milliseconds(from:)`` for the forms read).
public enum WireDate {
    /// Formats a date with millisecond precision (truncating, as the protocol does).
    public static func string(from date: Date) -> String {
        // A date read from millisecond text holds its millisecond only approximately: a Double of
        // seconds, converted to and from Foundation's reference date. Within that error (at most
        // 2.5 units in the last place of the larger of the two, measured 1.5; half a microsecond
        // at least) the date is that millisecond, so it prints back as the same text in any year;
        // otherwise it is truncated.
        let seconds = date.timeIntervalSince1970
        let scaled = seconds * 1000
        guard scaled.isFinite else { return string(milliseconds: scaled < 0 ? .min : .max) }
        let nearest = scaled.rounded()
        let tolerance = max(0.000_5, 3 * max(abs(seconds), abs(date.timeIntervalSinceReferenceDate)).ulp * 1000)
        let millis = abs(scaled - nearest) <= tolerance ? nearest : scaled.rounded(.down)
        return string(milliseconds: Int64(max(min(millis, 9e15), -9e15)))
    }

    /// Parses a wire timestamp, with or without fractional seconds and with `Z` or an offset;
    /// the date is truncated to the millisecond (see ``milliseconds(from:)``).
    /// - Returns: the date, or `nil` when the text is not a timestamp.
    public static func date(from text: String) -> Date? {
        milliseconds(from: text).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// The start of every delta token: 1970-01-01T00:00:00.000Z.
    public static let epoch = Date(timeIntervalSince1970: 0)
}

/// Table names: shared rules for the client and the server.
public enum TableName {
    /// The reserved suffix of the companion table that holds a table's attachment metadata.
    public static let attachmentsSuffix = "__attachments"

    /// Whether `name` can name a user table: a letter, then up to 127 letters, digits or `_`.
    /// Names starting with `__` are the system tables' and are refused, and so are names ending
    /// with ``attachmentsSuffix`` (whatever its ASCII case): those name companion tables.
    public static func isValid(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 128 else { return false }
        guard first.isASCIILetter, !endsWithAttachmentsSuffix(name) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// Whether `name` names a table that syncs: a user table (``isValid(_:)``), or the attachment
    /// companion table of one (``attachmentOwner(of:)``).
    public static func isServed(_ name: String) -> Bool {
        isValid(name) || attachmentOwner(of: name) != nil
    }

    /// The companion table that holds the attachment metadata of `table`: `T__attachments`.
    ///
    /// - Parameter table: A user table's name.
    /// - Returns: The companion table's name.
    public static func attachments(of table: String) -> String {
        table + attachmentsSuffix
    }

    /// The table whose attachment metadata the companion table `name` holds, or `nil` when
    /// `name` is not a companion table's name (the reverse of ``attachments(of:)``).
    ///
    /// - Parameter name: A table name.
    /// - Returns: The user table's name, when it is valid.
    public static func attachmentOwner(of name: String) -> String? {
        guard endsWithAttachmentsSuffix(name) else { return nil }
        let owner = String(name.utf8.dropLast(attachmentsSuffix.utf8.count)) ?? ""
        return isValid(owner) ? owner : nil
    }

    private static func endsWithAttachmentsSuffix(_ name: String) -> Bool {
        name.utf8.count >= attachmentsSuffix.utf8.count && ASCIICase.fold(String(name.suffix(attachmentsSuffix.count))) == attachmentsSuffix
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
