import HTTPTypes
import Hummingbird
import SyncWire

/// A refused request of an attachment's content route: a JSON message, and the offset the
/// server holds (`Upload-Offset`) when the request named another.
struct AttachmentError: HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    let message: String
    /// The bytes the server holds, sent as `Upload-Offset`.
    let offset: Int64?

    /// The request's offset is not the one the server holds (409).
    static func offsetMoved(_ held: Int64) -> AttachmentError {
        AttachmentError(status: .conflict, message: "The upload offset does not match the server's (\(held))", offset: held)
    }

    /// Another request is uploading the same content (409).
    static func busy(_ held: Int64) -> AttachmentError {
        AttachmentError(status: .conflict, message: "Another request is uploading this attachment", offset: held)
    }

    /// The body would go beyond the attachment's size (413).
    static func beyondSize(_ size: Int64) -> AttachmentError {
        AttachmentError(status: .contentTooLarge, message: "The content would be longer than the attachment's size of \(size) bytes", offset: nil)
    }

    /// The complete content's SHA-256 is not the row's (422); the content was discarded.
    static let digestMismatch = AttachmentError(
        status: .unprocessableContent, message: "The content's SHA-256 does not match the attachment's sha256; the upload starts again at 0",
        offset: 0)

    /// The content is already complete (409).
    static func complete(_ size: Int64) -> AttachmentError {
        AttachmentError(status: .conflict, message: "The attachment's content is complete", offset: size)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [:]
        if let offset, let name = HTTPField.Name(WireHeader.uploadOffset) { headers[name] = String(offset) }
        return try JSONResponse.make(["error": JSONValue.string(message)] as JSONObject, status: status, headers: headers)
    }
}
