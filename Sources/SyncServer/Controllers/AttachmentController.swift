import HTTPTypes
import Hummingbird
import NIOCore
import SyncWire

/// The content routes of attachments (docs/server.md, "Attachments"):
/// `/tables/{table}__attachments/{id}/content` with `HEAD` (the offset held), `PATCH` (append at
/// an offset) and `GET` (the complete content, or a range of it). A request reaches the content
/// of a metadata row it can read, and nothing else: any other attachment is a 404 exactly as a
/// missing one.
struct AttachmentController: Sendable {
    let tables: TableController
    let uploads: AttachmentUploads

    static let offsetName = HTTPField.Name(WireHeader.uploadOffset)
    static let lengthName = HTTPField.Name(WireHeader.uploadLength)

    func addRoutes(to router: Router<ServerRequestContext>) {
        let group = router.group("tables")
        group.add(middleware: AuthenticationMiddleware(authentication: tables.configuration.authentication))
        group.add(middleware: APIVersionMiddleware())
        group.on(":table/:id/content", method: .head) { _, context in try await head(context) }
        group.patch(":table/:id/content") { request, context in try await patch(request, context) }
        group.get(":table/:id/content") { request, context in try await get(request, context) }
    }

    /// The attachment a request names: its key, size, digest and content type; 404 when the
    /// request cannot read its row (missing, deleted, another user's) or names no companion table.
    private func attachment(_ context: ServerRequestContext) async throws -> (key: AttachmentKey, size: Int64, digest: String, type: String) {
        let table = try tables.tableName(context)
        guard TableName.attachmentOwner(of: table) != nil else { throw TableError.notFound("Only attachment tables have content") }
        let scope = try tables.scope(table, context)
        let row = try await tables.service.read(table: table, id: try tables.itemID(context), scope: scope, includeDeleted: false)
        guard let id = row[SystemProperty.id]?.stringValue, let size = AttachmentRows.size(of: row), let digest = AttachmentRows.digest(of: row)
        else { throw TableError.notFound() }
        let type = row[AttachmentRows.contentType]?.stringValue ?? "application/octet-stream"
        return (AttachmentKey(table: table, scope: scope, id: id), size, digest, type)
    }

    /// `HEAD`: 200 with `Upload-Offset` (the bytes held) and `Upload-Length` (the size); with
    /// the `ETag` of the content once it is complete.
    func head(_ context: ServerRequestContext) async throws -> Response {
        let attachment = try await attachment(context)
        let held = try await uploads.store.held(attachment.key)
        var headers = progress(held.complete ? attachment.size : held.count, size: attachment.size)
        if held.complete { headers[.eTag] = ETag.quote(attachment.digest) }
        return Response(status: .ok, headers: headers)
    }

    /// `PATCH`: appends the body at `Upload-Offset`; 204 with the new offset.
    func patch(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix(WireHeader.offsetOctetStream) else {
            throw TableError(.unsupportedMediaType, "The body of an upload must be \(WireHeader.offsetOctetStream)")
        }
        guard let name = Self.offsetName, let text = request.headers[name], let offset = Int64(text), offset >= 0 else {
            throw TableError.badRequest("An upload needs an Upload-Offset header of 0 or more")
        }
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        let attachment = try await attachment(context)
        let position = try await uploads.upload(
            attachment.key, offset: offset, size: attachment.size, digest: attachment.digest, declaredLength: declared, body: request.body)
        return Response(status: .noContent, headers: progress(position, size: attachment.size))
    }

    /// `GET`: the complete content (200) or the range asked for (206), with the SHA-256 as `ETag`.
    func get(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let attachment = try await attachment(context)
        guard try await uploads.store.held(attachment.key).complete else {
            throw TableError.notFound("The attachment's content is not complete")
        }
        var headers: HTTPFields = [.eTag: ETag.quote(attachment.digest), .acceptRanges: "bytes", .cacheControl: "no-cache"]
        headers[.contentType] = attachment.type
        var status = HTTPResponse.Status.ok
        var range: ClosedRange<Int64>? = attachment.size > 0 ? 0...(attachment.size - 1) : nil
        if let asked = request.headers[.range], let parsed = ByteRange(asked) {
            guard let satisfied = parsed.within(attachment.size) else {
                return try JSONResponse.make(
                    ["error": JSONValue.string("The range is beyond the content's \(attachment.size) bytes")] as JSONObject,
                    status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(attachment.size)"])
            }
            range = satisfied
            status = .partialContent
            headers[.contentRange] = "bytes \(satisfied.lowerBound)-\(satisfied.upperBound)/\(attachment.size)"
        }
        let length = range.map { Int($0.upperBound - $0.lowerBound + 1) } ?? 0
        let (uploads, key, sent) = (self.uploads, attachment.key, range)
        let body = ResponseBody(contentLength: length) { writer in
            if let sent { try await uploads.send(key, sent, to: &writer) }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    private func progress(_ offset: Int64, size: Int64) -> HTTPFields {
        var headers: HTTPFields = [.cacheControl: "no-cache"]
        if let name = Self.offsetName { headers[name] = String(offset) }
        if let name = Self.lengthName { headers[name] = String(size) }
        return headers
    }
}

/// A `Range: bytes=a-` or `bytes=a-b` header (one range; another form is ignored, as RFC 9110
/// allows, and the whole content is sent).
struct ByteRange: Hashable {
    let first: Int64
    let last: Int64?

    init?(_ header: String) {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), first >= 0 else { return nil }
        if parts[1].isEmpty {
            last = nil
        } else {
            guard let last = Int64(parts[1]), last >= first else { return nil }
            self.last = last
        }
        self.first = first
    }

    /// The bytes of a content of `size` the range names, `nil` when it names none.
    func within(_ size: Int64) -> ClosedRange<Int64>? {
        guard first < size else { return nil }
        return first...min(last ?? (size - 1), size - 1)
    }
}
