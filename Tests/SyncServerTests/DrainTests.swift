import Foundation
import SyncTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM drains: the `sync-server` executable stops taking requests, lets the ones in flight
/// finish, and exits 0.
@Suite struct DrainTests {
    @Test func aRequestInFlightAtSIGTERMCompletesAndTheServerExitsZero() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start(logLevel: "debug", capturesLog: true)
        let port = try #require(server.url.port)
        let text = String(repeating: "x", count: 600_000)
        let body = Array(#"{"id": "big", "text": "\#(text)"}"#.utf8)
        let head = """
            POST /tables/drain HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nZUMO-API-VERSION: 2.0.0\r\n\
            Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n
            """
        let connection = try RawConnection(port: port)
        let half = body.count / 2
        // Half the body is uploaded, and the server logs that it is handling the request: it is in
        // flight when the signal comes.
        try await connection.send(Array(head.utf8) + body[..<half])
        _ = await server.log(until: "hb.request.path=/tables/drain")
        server.send(signal: SIGTERM)
        let log = await server.log(until: "Stopping: finishing the requests in flight")
        #expect(log.contains("Stopping: finishing the requests in flight"))

        try await connection.send(Array(body[half...]))
        let response = try await connection.readToEnd()
        #expect(response.hasPrefix("HTTP/1.1 201 "), "\(response.prefix(200))")
        #expect(response.contains(text), "the whole body arrived and was stored")
        #expect(server.waitForExit() == 0, "a graceful exit")
    }
}

/// A blocking TCP connection to 127.0.0.1, each call run on a thread of its own.
final class RawConnection: Sendable {
    private let descriptor: Int32

    /// Connects to `port`; with `resetOnClose`, closing the connection resets it (`SO_LINGER`
    /// 0), as a device whose network goes.
    init(port: Int, resetOnClose: Bool = false) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        if resetOnClose {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends every byte.
    func send(_ bytes: [UInt8]) async throws {
        let descriptor = self.descriptor
        try await Self.onThread {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { throw POSIXError(.EPIPE) }
                offset += sent
            }
        }
    }

    /// What the peer sends until the text holds `marker` (or the peer closes the connection).
    func read(until marker: String) async throws -> String {
        try await receive { String(decoding: $0, as: UTF8.self).contains(marker) }
    }

    /// Everything the peer sends until it closes the connection, as text.
    func readToEnd() async throws -> String {
        try await receive { _ in false }
    }

    /// Receives until `done` holds for the bytes so far or the peer closes the connection.
    private func receive(until done: @escaping @Sendable ([UInt8]) -> Bool) async throws -> String {
        let descriptor = self.descriptor
        return try await Self.onThread {
            var data = [UInt8]()
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !done(data) {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count >= 0 else { throw POSIXError(.ECONNRESET) }
                if count == 0 { break }
                data += chunk[..<count]
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
