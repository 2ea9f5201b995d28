public import Foundation

/// A loopback port that refuses every connection for as long as this value lives: a TCP socket
/// bound to 127.0.0.1 and a port of the kernel's choosing that never listens. A port freed by
/// stopping a server is no such thing: the next server of any test that asks for port 0 can be
/// given it, and a connection then reaches that server. Keep the value alive (`extendLifetime`)
/// until the last connection has been tried.
public final class RefusingPort: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        (descriptor, port) = try loopbackSocket(listening: false)
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:port` followed by `path`.
    public func url(_ path: String = "") -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }
}

/// A TCP socket bound to 127.0.0.1 and a port of the kernel's choosing, listening or not.
/// - Returns: The socket's descriptor (the caller closes it) and its port.
public func loopbackSocket(listening: Bool) throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
                && (!listening || listen(descriptor, 16) == 0)
        }
    }
    guard bound else {
        let code = errno
        close(descriptor)
        throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
