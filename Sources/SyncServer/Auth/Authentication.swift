public import HTTPTypes
public import Hummingbird
import NIOCore

/// How the server authenticates table requests.
public enum Authentication: Sendable {
    /// Every request is let in, without an identity (per-user tables then answer 401).
    case none
    /// Every table request must carry this `X-ZUMO-AUTH` token (compared in constant time), or
    /// it is answered 401. The token names nobody: requests have no identity, so per-user
    /// tables answer 401.
    case sharedToken(String)
    /// Every table request must prove an identity to the verifier, or it is answered 401; the
    /// identity's subject owns the rows of per-user tables.
    case verifier(any IdentityVerifier)
}

/// Establishes who sent a request from its headers (a signed token, say): the seam where a
/// token verifier plugs in.
public protocol IdentityVerifier: Sendable {
    /// The identity the request's headers prove.
    ///
    /// - Parameter headers: The request's headers.
    /// - Returns: The identity.
    /// - Throws: Why the headers prove none. An `HTTPResponseError` is sent as it is (a 401
    ///   naming the class of failure); any other error is answered 401 `{"error": "Unauthorized"}`.
    func authenticate(headers: HTTPFields) throws -> Identity
}

/// The request context of the server: Hummingbird's core context plus the identity that
/// authentication established, if any.
public struct ServerRequestContext: RequestContext {
    /// Hummingbird's per-request state.
    public var coreContext: CoreRequestContextStorage
    /// Who sent the request; `nil` until authentication sets it, and always `nil` without a
    /// verifier.
    public var identity: Identity?
    /// The request's connection: the event loop its I/O runs on, and the future of its closing.
    let connection: any Channel

    /// A context for a new request, without an identity.
    ///
    /// - Parameter source: The channel and logger of the request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        identity = nil
        connection = source.channel
    }
}
