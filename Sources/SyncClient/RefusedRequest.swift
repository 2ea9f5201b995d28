import SyncStore
import SyncWire

/// The request a conflict refused, as the server tells requests apart: the method (the
/// operation's kind), the `If-Match` version (update, delete) and the body (insert, update). A
/// resolution that would queue the very same request again is refused with
/// ``SyncError/resolutionWouldRepeat``: the server would refuse it again, and a policy that
/// always picks that resolution would send it forever (POST, 409, GET, 404, POST, …).
struct RefusedRequest {
    private let kind: TableOperation.Kind
    private let version: String?
    private let body: JSONObject?

    /// The refused request of a conflict, or `nil` for an error that is not one (a 400, a 5xx, no
    /// answer: sending the same again may well succeed) or that kept no sent item.
    init?(_ error: TableOperationError) {
        guard error.conflict != nil, let item = error.item else { return nil }
        self.init(kind: error.kind, item: item)
    }

    private init(kind: TableOperation.Kind, item: JSONObject) {
        self.kind = kind
        version = kind == .insert ? nil : item[SystemProperty.version]?.stringValue
        body = kind == .delete ? nil : item
    }

    /// Throws ``SyncError/resolutionWouldRepeat`` when an operation of `kind` sending `item` (the
    /// local row of an insert or update, the item kept with a delete) is the refused request: the
    /// same kind and version, and user values the refused body holds (``PushAnswer/holds(_:in:)``:
    /// system properties aside, a missing property is `null`).
    func check(kind: TableOperation.Kind, item: JSONObject?) throws {
        guard kind == self.kind else { return }
        let next = RefusedRequest(kind: kind, item: item ?? [:])
        guard next.version == version else { return }
        if let body, let nextBody = next.body, !PushAnswer.holds(body, in: nextBody) { return }
        throw SyncError(
            .resolutionWouldRepeat,
            reason: "The resolution would send the request the server refused, unchanged; choose another resolution.")
    }
}
