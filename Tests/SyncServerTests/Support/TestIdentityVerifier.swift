import HTTPTypes
import SyncServer
import SyncWire

/// A verifier for tests only: the `X-ZUMO-AUTH` token is the subject's name itself. A request
/// without one proves no identity (401).
struct TestIdentityVerifier: IdentityVerifier {
    struct NoToken: Error {}

    func authenticate(headers: HTTPFields) throws -> Identity {
        guard let name = HTTPField.Name(WireHeader.auth), let subject = headers[name], !subject.isEmpty else { throw NoToken() }
        return Identity(subject: subject)
    }

    /// The API version header and `subject`'s token.
    static func headers(_ subject: String) -> HTTPFields {
        var fields = TestServer.version
        if let name = HTTPField.Name(WireHeader.auth) { fields[name] = subject }
        return fields
    }
}
