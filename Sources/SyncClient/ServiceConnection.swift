import Foundation
import SyncWire

/// The feature codes of `X-ZUMO-FEATURES` (docs/protocol.md §1.4.2).
enum Feature: String, Sendable, Hashable, Comparable {
    case untypedTable = "TU"
    case typedTable = "TT"
    case queryObject = "TQ"
    case queryParameters = "QS"
    case offline = "OL"
    case incrementalPull = "IP"
    case linkHeader = "LH"

    private var order: Int {
        switch self {
        case .untypedTable: return 0
        case .typedTable: return 1
        case .queryObject: return 2
        case .queryParameters: return 3
        case .offline: return 4
        case .incrementalPull: return 5
        case .linkHeader: return 6
        }
    }

    static func < (lhs: Feature, rhs: Feature) -> Bool { lhs.order < rhs.order }

    /// The header value for a set of features: codes in a fixed order, comma-separated.
    static func headerValue(_ features: Set<Feature>) -> String {
        features.sorted().map(\.rawValue).joined(separator: ",")
    }
}

/// How the client talks to one backend: builds the protocol's requests (URLs, the §1.1 headers)
/// and sends them through the transport. Shared by online tables and the sync context.
struct ServiceConnection: Sendable {
    /// The SDK version string sent in `User-Agent` and `X-ZUMO-VERSION`.
    static let sdkVersion = "ZUMO/2.0 (lang=Swift; os=--; os_version=--; arch=--; version=CipherSync/0.1.0)"

    let baseURL: URL
    let transport: any SyncTransport
    let installationID: String
    /// The `X-ZUMO-AUTH` token for each request, asked for just before it is sent.
    let authenticationToken: MobileServiceClient.TokenProvider?
    /// The service URL's parts, its path without a trailing `/`, parsed once: `nil` when it cannot
    /// be parsed (every request then fails with ``SyncError/invalidURL``).
    private let base: URLComponents?

    init(baseURL: URL, transport: any SyncTransport, installationID: String, authenticationToken: MobileServiceClient.TokenProvider?) {
        self.baseURL = baseURL
        self.transport = transport
        self.installationID = installationID
        self.authenticationToken = authenticationToken
        var base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true)
        while base?.percentEncodedPath.hasSuffix("/") == true { base?.percentEncodedPath.removeLast() }
        self.base = base
    }

    // MARK: building requests

    /// The URL of `/tables/{table}[/{id}]` with query items (names and values are encoded here).
    func tableURL(_ table: String, id: String? = nil, query: [(String, String)] = []) throws -> URL {
        try url(["tables", table] + (id.map { [$0] } ?? []), query: query)
    }

    /// The URL of a path under the service URL, each segment encoded, with query items.
    func url(_ segments: [String], query: [(String, String)] = []) throws -> URL {
        guard var components = base else { throw SyncError.unparsableServiceURL }
        var path = components.percentEncodedPath
        for segment in segments { path += "/" + PercentEncoding.encode(segment) }
        components.percentEncodedPath = path
        components.percentEncodedQuery =
            query.isEmpty
            ? nil
            : ODataQuery.string(query.map { (name: $0.0, value: $0.1) })
        guard let url = components.url else {
            throw SyncError.unbuildableRequestURL
        }
        return url
    }

    /// The headers every request carries (§1.1), plus the features and the JSON content type
    /// when there is a body.
    func headers(features: Set<Feature>, hasBody: Bool) -> [String: String] {
        var headers = [
            WireHeader.apiVersion: WireHeader.apiVersionValue,
            WireHeader.sdkVersion: Self.sdkVersion,
            "User-Agent": Self.sdkVersion,
            WireHeader.installationID: installationID,
            "Accept": "application/json",
        ]
        if !features.isEmpty { headers[WireHeader.features] = Feature.headerValue(features) }
        if hasBody { headers["Content-Type"] = "application/json" }
        return headers
    }

    /// A complete request.
    func request(
        _ method: SyncRequest.Method, url: URL, body: JSONObject? = nil, ifMatch version: String? = nil,
        features: Set<Feature>
    ) throws -> SyncRequest {
        let data = try body.map { object -> Data in try Self.encoded { try JSONCoding.encode(object) } }
        return try request(method, url: url, data: data, ifMatch: version, features: features)
    }

    /// A complete request whose body is JSON text already.
    /// - Throws: ``SyncError/invalidItem`` for a version no header can carry (a control character
    ///   such as CR or LF, which a server's item may hold), ``SyncError/invalidSetting`` for such
    ///   an installation id: nothing is sent.
    func request(
        _ method: SyncRequest.Method, url: URL, data: Data?, ifMatch version: String? = nil, features: Set<Feature>
    ) throws -> SyncRequest {
        try checkInstallationID()
        var headers = headers(features: features, hasBody: data != nil)
        if let version {
            guard Self.fitsInAHeader(version) else {
                throw SyncError(.invalidItem, reason: "The item's version cannot be sent in an If-Match header.")
            }
            headers[WireHeader.ifMatch] = ETag.quote(version)
        }
        return SyncRequest(method: method, url: url, headers: headers, body: data)
    }

    /// Fails when the installation id holds a control character (CR, LF), which no header can
    /// carry: every request would fail as it was written.
    /// - Throws: ``SyncError/invalidSetting``.
    func checkInstallationID() throws {
        guard Self.fitsInAHeader(installationID) else {
            throw SyncError(.invalidSetting, reason: "The installation id cannot be sent in a header.")
        }
    }

    /// Whether a header field's value can hold `text`: no control character (RFC 9110 allows the
    /// tab, which none of ours needs; NIO refuses every other one as the request is written).
    static func fitsInAHeader(_ text: some StringProtocol) -> Bool {
        !text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// The JSON text `encode` writes; its failure as ``SyncError/invalidItem``.
    static func encoded(_ encode: () throws -> Data) throws -> Data {
        do { return try encode() } catch {
            throw SyncError(.invalidItem, reason: "The item cannot be encoded as JSON.", underlying: error)
        }
    }

    // MARK: sending

    /// The executor a run of requests (a push) prefers: on Linux, the event loop of
    /// ``HTTPSyncTransport``'s connections to the server; nil (no preference) otherwise.
    var runExecutor: (any TaskExecutor)? {
        #if os(Linux)
        (transport as? HTTPSyncTransport)?.executor(for: baseURL)
        #else
        nil
        #endif
    }

    /// Sends a request; a transport failure becomes ``SyncError/transportFailed`` (or
    /// ``SyncError/cancelled`` when the task or the run was cancelled).
    func send(_ request: SyncRequest, run: RunHandle? = nil) async throws -> SyncResponse {
        if run?.isCancelled == true || Task.isCancelled { throw SyncError.cancelled }
        let request = try await authorized(request)
        do {
            if let run { return try await run.send(request, through: transport) }
            return try await transport.send(request)
        } catch let error as SyncError {
            throw error
        } catch {
            if run?.isCancelled == true || Task.isCancelled || error is CancellationError || Self.isCancelledURLError(error) {
                throw SyncError(.cancelled, underlying: error)
            }
            throw SyncError.noAnswer(error)
        }
    }

    /// The request with the app's current authentication token, when the client has a provider.
    /// - Throws: ``SyncError/authenticationRequired`` when the provider throws or gives a token
    ///   no header can carry (nothing is sent).
    func authorized(_ request: SyncRequest) async throws -> SyncRequest {
        guard let authenticationToken else { return request }
        var request = request
        let token: String?
        do {
            token = try await authenticationToken()
        } catch {
            // The app could not produce a token: as good as a 401, nothing is sent.
            throw SyncError(.authenticationRequired, reason: "No authentication token.", underlying: error)
        }
        if let token {
            // A control character (CR LF) cannot be sent in a header: as good as no token.
            guard Self.fitsInAHeader(token) else {
                throw SyncError(.authenticationRequired, reason: "The authentication token cannot be sent in a header.")
            }
            request.headers[WireHeader.auth] = token
        }
        return request
    }

    static func isCancelledURLError(_ error: any Error) -> Bool {
        (error as? URLError)?.code == .cancelled
    }

    // MARK: reading responses

    /// The error for a non-2xx response: 401, 409 and 412 get their own kinds; the server's item
    /// is parsed from 409/412 bodies.
    static func error(for response: SyncResponse) -> SyncError {
        switch response.statusCode {
        case 401:
            return SyncError(.authenticationRequired, statusCode: 401)
        case 409:
            return SyncError(
                .conflict, reason: "The server has a conflicting item.", statusCode: 409,
                serverItem: item(from: response))
        case 412:
            return SyncError(
                .preconditionFailed, reason: "The server's version did not match the passed version.",
                statusCode: 412, serverItem: item(from: response))
        default:
            return SyncError(.requestFailed, reason: "The server answered an error status.", statusCode: response.statusCode)
        }
    }

    /// The JSON object of a response body, with a strong `ETag` header as its version (a weak
    /// tag is not a version, see `ETag`); `nil` when the body is empty or not a JSON object.
    static func item(from response: SyncResponse) -> JSONObject? {
        guard !response.body.isEmpty, var object = try? JSONCoding.decode(JSONObject.self, from: response.body) else {
            return nil
        }
        if let version = version(from: response) { object[SystemProperty.version] = .string(version) }
        return object
    }

    /// The version a response's strong `ETag` header carries, if any (a weak tag is not a version).
    static func version(from response: SyncResponse) -> String? {
        response.header(WireHeader.eTag).flatMap(ETag.version(from:))
    }

    /// The body text of a response, kept with operation errors (bounded in size).
    static func rawText(of response: SyncResponse) -> String? {
        guard !response.body.isEmpty else { return nil }
        return String(decoding: response.body.prefix(65_536), as: UTF8.self)
    }
}
