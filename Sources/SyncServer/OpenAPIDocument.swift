import HTTPTypes
import Hummingbird
import NIOCore

/// The OpenAPI 3.1 document of the server's API, `Resources/openapi.json`, compiled into the
/// server (one copy: the file in the repository is what `GET /openapi.json` sends, byte for byte).
///
/// It is written by hand. A route added to the router must be added to it: the tests compare
/// the router's routes with the document's operations, both ways.
enum OpenAPIDocument {
    /// The document's UTF-8 bytes.
    static var bytes: [UInt8] { PackageResources.openapi_json }

    /// `GET /openapi.json`: the document as JSON (no API version or authentication needed).
    static func response() -> Response {
        JSONResponse.make(bytes: bytes)
    }
}
