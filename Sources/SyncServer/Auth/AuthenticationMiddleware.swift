import HTTPTypes
import Hummingbird
import SyncWire

/// Authenticates table requests as ``Authentication`` says: a shared token is compared in
/// constant time; a verifier's identity is put into the request context. A refusal is a 401 and
/// the request goes no further.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let authentication: Authentication

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch authentication {
        case .none:
            return try await next(request, context)
        case .sharedToken(let token):
            let given = HTTPField.Name(WireHeader.auth).flatMap { request.headers[$0] } ?? ""
            guard Self.constantTimeEqual(Array(given.utf8), Array(token.utf8)) else { throw TableError.unauthorized }
            return try await next(request, context)
        case .verifier(let verifier):
            var context = context
            do {
                context.identity = try verifier.authenticate(headers: request.headers)
            } catch let error as any HTTPResponseError {
                throw error
            } catch {
                throw TableError.unauthorized
            }
            return try await next(request, context)
        }
    }

    /// Whether two byte strings are equal, comparing every byte of `expected` whatever the
    /// input, so the time taken does not say how much of a guess was right.
    static func constantTimeEqual(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for (index, byte) in expected.enumerated() { difference |= byte ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
