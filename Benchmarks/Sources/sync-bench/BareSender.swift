#if canImport(Glibc)
import Foundation
import Glibc
import SyncWire

/// Inserts sent one at a time over a bare socket: a blocking TCP connection, each request written
/// as ready-made HTTP/1.1 text and its answer read to the end of its body, with no client stack
/// (no SwiftNIO, no `SyncClient`, no store). What the server alone allows a push of one request at
/// a time: set beside `round-trip` and the pushes, it shows how a serial push's time divides
/// between the server and the client.
struct BareSender {
    /// The server table the inserts go to (apart from the pushes' table).
    static let table = "benchBare"

    private let socket: Int32
    /// The `Host` header of every request: the server's address and port.
    private let host: String
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Connects to `server` (`http://HOST:PORT`, an IPv4 address).
    /// - Throws: ``BenchError`` when the URL is not one or the connection fails.
    init(server: URL) throws {
        guard server.scheme == "http", let host = server.host, let port = server.port, let port = UInt16(exactly: port) else {
            throw BenchError("the bare sender needs an http://IPv4:PORT server, not \(server)")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw BenchError("the bare sender needs an IPv4 address, not \(host)") }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            _ = Glibc.close(socket)
            throw BenchError("connect() to \(host):\(port) failed: errno \(errno)")
        }
        self.socket = socket
        self.host = "\(host):\(port)"
    }

    /// Closes the connection.
    func close() {
        _ = Glibc.close(socket)
    }

    /// The connection's descriptor (to wait for its answers with `poll`/`epoll`).
    var descriptor: Int32 { socket }

    /// The request text of an insert of item `index` with a new id.
    func insertRequest(_ index: Int) throws -> [UInt8] {
        var item = BenchItems.userItem(index)
        item[SystemProperty.id] = .string(UUID().uuidString)
        return request("POST", "/tables/\(Self.table)", body: Array(try JSONCoding.encode(item)))
    }

    /// The text of a request with the API version header, `headers` (each `Name: value`) and a
    /// JSON body when `body` is not empty.
    func request(
        _ method: String, _ path: String, body: [UInt8] = [], contentType: String = "application/json", headers: [String] = []
    ) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nAccept: application/json\r\n\(WireHeader.apiVersion): 2.0.0\r\n"
        for header in headers { head += header + "\r\n" }
        if !body.isEmpty { head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    /// Writes all of `bytes`.
    /// - Throws: ``BenchError`` when the connection fails.
    func write(_ bytes: [UInt8]) throws {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(socket, $0.baseAddress! + written, $0.count - written) }
            guard n > 0 else { throw BenchError("write() failed: errno \(errno)") }
            written += n
        }
    }

    /// Writes `request` and reads its answer to the end of its body.
    /// - Returns: the answer's status code.
    /// - Throws: ``BenchError`` when the connection fails or the answer is not HTTP/1.1 with a
    ///   `Content-Length`.
    mutating func send(_ request: [UInt8]) throws -> Int {
        try exchange(request).status
    }

    /// Writes `request` and reads its answer to the end of its body.
    /// - Returns: the answer's status code and body.
    /// - Throws: as ``send(_:)``.
    mutating func exchange(_ request: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        try write(request)
        var filled = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress! + filled, $0.count - filled) }
            guard n > 0 else { throw BenchError("the server closed the connection") }
            filled += n
            if let (status, length, body) = try Self.answer(buffer[..<filled]), filled >= length {
                return (status, Array(buffer[body..<length]))
            }
            // A larger answer (an attachment's content) grows the buffer.
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
        }
    }

    /// The status, the whole length of the answer in `bytes` and where its body starts, once its
    /// head has arrived (read
    /// as bytes: the sender's own work stays small beside the server's).
    /// - Throws: ``BenchError`` for a head that is not HTTP/1.1 with a `Content-Length` (which a
    ///   204 answer may leave out).
    static func answer(_ bytes: ArraySlice<UInt8>) throws -> (status: Int, length: Int, bodyStart: Int)? {
        let (cr, lf) = (UInt8(ascii: "\r"), UInt8(ascii: "\n"))
        guard
            let headEnd = bytes.indices.dropLast(3).first(where: {
                bytes[$0] == cr && bytes[$0 + 1] == lf && bytes[$0 + 2] == cr && bytes[$0 + 3] == lf
            })
        else { return nil }
        let head = bytes[..<headEnd]
        guard head.starts(with: "HTTP/1.1 ".utf8), head.count >= 12, let status = number(head.dropFirst(9).prefix(3)) else {
            throw BenchError("the answer does not begin with an HTTP/1.1 status line")
        }
        // "\r\ncontent-length:" in any case, then the digits after optional spaces.
        let name = Array("\r\ncontent-length:".utf8)
        guard
            let at = head.indices.first(where: { at in
                head[at...].count >= name.count && zip(head[at...], name).allSatisfy { lowercased($0) == $1 }
            })
        else {
            guard status == 204 else { throw BenchError("the answer has no Content-Length") }
            return (status, headEnd - bytes.startIndex + 4, headEnd - bytes.startIndex + 4)
        }
        let value = head[(at + name.count)...].drop { $0 == UInt8(ascii: " ") }.prefix { $0 != cr }
        guard let length = number(value) else { throw BenchError("the answer's Content-Length is not a number") }
        return (status, headEnd - bytes.startIndex + 4 + length, headEnd - bytes.startIndex + 4)
    }

    /// `byte` with an ASCII capital letter made small.
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    /// The decimal number the ASCII digits `digits` spell; nil when it is empty or not digits.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count < 10 else { return nil }
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
#endif
