import HTTPTypes
import SyncWire

/// The rules of the metadata rows of attachment companion tables (`T__attachments`,
/// docs/server.md, "Attachments"): a row is an ordinary item whose user properties are exactly
/// `itemId`, `name`, `contentType`, `size` and `sha256`; only `name` may change afterwards.
enum AttachmentRows {
    /// The id of the item of the companion's table the attachment belongs to.
    static let itemID = "itemId"
    /// The file name shown to users.
    static let name = "name"
    /// The content's media type.
    static let contentType = "contentType"
    /// The content's length in bytes.
    static let size = "size"
    /// The lowercase hex SHA-256 of the content.
    static let sha256 = "sha256"
    /// Every property a row may carry in a request body (`version` travels with updates).
    static let properties: Set<String> = [SystemProperty.id, SystemProperty.version, itemID, name, contentType, size, sha256]

    /// What a valid insert of a metadata row says.
    struct Inserted {
        let itemID: String
        let size: Int64
    }

    /// Checks the body of an insert: every property present, of its type, none other.
    ///
    /// - Parameters:
    ///   - item: The request body.
    ///   - limit: The largest content accepted, in bytes.
    /// - Returns: The item id and size it names.
    /// - Throws: A 400 naming the first wrong property; a 413 for a size above `limit`.
    static func checkInsert(_ item: JSONObject, limit: Int64) throws(TableError) -> Inserted {
        try checkKnown(item)
        guard case .string(let parent)? = item[itemID], ItemID.isValid(parent) else { throw missing(itemID, "an item id") }
        try checkName(item[name])
        guard case .string(let type)? = item[contentType], !type.isEmpty, type.utf8.count <= 255 else {
            throw missing(contentType, "a media type of 1 to 255 bytes")
        }
        guard let length = item[size].flatMap(integer), length >= 0 else { throw missing(size, "an integer of 0 or more") }
        guard length <= limit else { throw TableError(.contentTooLarge, "The attachment is larger than the limit of \(limit) bytes") }
        guard case .string(let digest)? = item[sha256], isDigest(digest) else { throw missing(sha256, "64 lowercase hex digits") }
        return Inserted(itemID: parent, size: length)
    }

    /// Checks the body of an update against the stored row: only `name` may change (another
    /// property may be sent with its stored value).
    ///
    /// - Throws: A 400 naming the first property that would change or is not a row's.
    static func checkUpdate(_ changes: JSONObject, stored: JSONObject) throws(TableError) {
        try checkKnown(changes)
        for (key, value) in changes.sorted(by: { $0.key < $1.key }) where ![SystemProperty.id, SystemProperty.version, name].contains(key) {
            guard stored[key] == value || (stored[key].flatMap(integer) != nil && stored[key].flatMap(integer) == integer(value)) else {
                throw TableError.badRequest("The property '\(key)' of an attachment cannot change; only 'name' can")
            }
        }
        if changes[name] != nil { try checkName(changes[name]) }
    }

    /// The attachment's size, as stored in `row`.
    static func size(of row: JSONObject) -> Int64? { row[size].flatMap(integer) }

    /// The attachment's digest, as stored in `row`.
    static func digest(of row: JSONObject) -> String? { row[sha256]?.stringValue }

    private static func checkKnown(_ item: JSONObject) throws(TableError) {
        if let unknown = item.keys.sorted().first(where: { !properties.contains($0) }) {
            throw TableError.badRequest("An attachment has no property '\(unknown.prefix(64))'")
        }
    }

    private static func checkName(_ value: JSONValue?) throws(TableError) {
        guard case .string(let text)? = value, (1...255).contains(text.count), !text.contains("/"), !text.contains("\u{0}") else {
            throw missing(name, "a file name of 1 to 255 characters without '/' or NUL")
        }
    }

    private static func integer(_ value: JSONValue) -> Int64? {
        switch value {
        case .int(let number): return number
        case .double(let number) where number.rounded() == number && abs(number) < 9.0e15: return Int64(number)
        default: return nil
        }
    }

    private static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private static func missing(_ property: String, _ what: String) -> TableError {
        TableError.badRequest("The attachment's '\(property)' must be \(what)")
    }
}
