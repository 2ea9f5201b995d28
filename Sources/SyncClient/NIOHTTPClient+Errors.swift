#if os(Linux)
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

extension NIOHTTPClient {
    /// The `URLError` URLSession reports for the same failure, so that callers (live sync's
    /// reconnection among them) see the same errors whichever stack carried the request.
    /// `CancellationError` and `URLError` pass through.
    /// - Parameter error: what NIO reported.
    /// - Returns: the error to hand on.
    static func urlError(for error: any Error) -> any Error {
        switch error {
        case is CancellationError, is URLError:
            return error
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return urlError(for: first.error) }
            return URLError(.cannotFindHost, userInfo: [NSLocalizedDescriptionKey: "The host name \(error.host) was not found."])
        case let error as IOError:
            return URLError(code(errno: error.errnoCode), userInfo: [NSLocalizedDescriptionKey: error.description])
        case let error as ChannelError:
            return URLError(isConnectTimeout(error) ? .timedOut : .networkConnectionLost)
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return URLError(.secureConnectionFailed, userInfo: [NSLocalizedDescriptionKey: String(describing: error)])
        case let error as HTTPParserError:
            // The connection closed in the middle of a response.
            return URLError(error == .invalidEOFState ? .networkConnectionLost : .badServerResponse)
        default:
            return URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: String(describing: error)])
        }
    }

    private static func isConnectTimeout(_ error: ChannelError) -> Bool {
        if case .connectTimeout = error { return true }
        return false
    }

    /// The `URLError` code of a failed socket call.
    private static func code(errno: Int32) -> URLError.Code {
        switch errno {
        case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL: .cannotConnectToHost
        case ETIMEDOUT: .timedOut
        case ENETDOWN: .notConnectedToInternet
        default: .networkConnectionLost
        }
    }
}
#endif
