import Foundation
public import Hummingbird
public import SyncWire

/// A request the tables protocol answers with an error status and a JSON body: `{"error": …}`,
/// or, for 409 and 412, the stored item with its `ETag`.
public struct TableError: HTTPResponseError, Sendable {
    /// The HTTP status of the answer.
    public let status: HTTPResponse.Status
    /// What is wrong, sent as `{"error": message}` when there is no item.
    public let message: String
    /// The stored item, sent as the body of a conflict.
    public let item: JSONObject?

    /// An error answer.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - message: What is wrong, safe to send to the client.
    ///   - item: The stored item, for a 409 or 412.
    public init(_ status: HTTPResponse.Status, _ message: String, item: JSONObject? = nil) {
        self.status = status
        self.message = message
        self.item = item
    }

    /// The answer: the item with its `ETag` when there is one, else `{"error": message}`.
    ///
    /// - Parameters:
    ///   - request: The request (unused).
    ///   - context: Its context (unused).
    /// - Returns: The response.
    /// - Throws: An encoding error (not expected).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        if let item {
            return try JSONResponse.item(item, status: status)
        }
        return try JSONResponse.make(["error": JSONValue.string(message)] as JSONObject, status: status)
    }

    static func badRequest(_ message: String) -> TableError { TableError(.badRequest, message) }
    static let unauthorized = TableError(.unauthorized, "Unauthorized")
    static func notFound(_ message: String = "The item does not exist") -> TableError { TableError(.notFound, message) }
    static func contentTooLarge(limit: Int) -> TableError {
        TableError(.contentTooLarge, "The request body is larger than the limit of \(limit) bytes")
    }
    static let missingAPIVersion = TableError(
        .badRequest,
        "An invalid API version was specified in the request, this request needs to specify a ZUMO-API-VERSION of 2.0.0.")
}

/// A table stored as the other kind than the server serves it as (only possible when instances
/// over one database are configured differently): a 500 naming the table.
extension TableStorageError: HTTPResponseError {
    /// 500.
    public var status: HTTPResponse.Status { .internalServerError }

    /// `{"error": …}` with the description.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponse.make(["error": JSONValue.string(description)] as JSONObject, status: status)
    }
}

/// JSON responses with the protocol's headers.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        make(bytes: try JSONCoding.encode(value), status: status, headers: headers)
    }

    /// A response whose body is `bytes`, JSON already.
    static func make(bytes: some Sequence<UInt8>, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.cacheControl] = "no-cache"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A single item, with its version as a quoted `ETag`.
    static func item(_ item: JSONObject, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers: HTTPFields = [:]
        if case .string(let version)? = item[SystemProperty.version] {
            headers[.eTag] = ETag.quote(version)
        }
        return try make(item, status: status, headers: headers)
    }
}
