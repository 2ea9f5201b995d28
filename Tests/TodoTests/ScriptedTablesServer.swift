import Foundation
import SyncTestSupport
import Synchronization

/// A tables server on 127.0.0.1 (a port of the kernel's choosing) that answers each request as
/// its script says: enough HTTP/1.1 for `todo` (one request per connection, `Connection: close`),
/// so that a test can play a backend that is not ours (the Node server of Azure Mobile Apps) as
/// far as the test needs. Every request line it read is kept.
final class ScriptedTablesServer: Sendable {
    /// A request as the script sees it.
    struct Request: Sendable {
        let method: String
        /// The path with its query, percent-decoded.
        let target: String
        let body: Data
    }

    /// An answer: a status and a JSON body.
    struct Answer: Sendable {
        let status: Int
        let body: Data

        init(_ status: Int, json: String) {
            self.status = status
            body = Data(json.utf8)
        }

        init(_ status: Int, body: Data) {
            self.status = status
            self.body = body
        }
    }

    let port: Int
    private let descriptor: Int32
    private let seen = RequestLines()

    /// Starts listening and answering with `script`.
    init(_ script: @escaping @Sendable (Request) -> Answer) throws {
        let (descriptor, port) = try loopbackSocket(listening: true)
        self.descriptor = descriptor
        self.port = port
        let seen = self.seen
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return  // the listener was closed
                }
                if let request = Self.read(connection) {
                    seen.lines.withLock { $0.append("\(request.method) \(request.target)") }
                    Self.write(script(request), to: connection)
                }
                close(connection)
            }
        }
    }

    /// Stops listening.
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }

    /// The server's base URL.
    var url: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    /// Every request line read so far (`GET /tables/todoItem/…`), in order.
    var requests: [String] { seen.lines.withLock { $0 } }

    private static func read(_ connection: Int32) -> Request? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let separator = Data("\r\n\r\n".utf8)
        while true {
            if let end = data.range(of: separator) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                let parts = head.first?.split(separator: " ").map(String.init) ?? []
                guard parts.count >= 2 else { return nil }
                let length =
                    head.dropFirst().compactMap { line -> Int? in
                        let pair = line.split(separator: ":", maxSplits: 1)
                        guard pair.count == 2, pair[0].lowercased() == "content-length" else { return nil }
                        return Int(pair[1].trimmingCharacters(in: .whitespaces))
                    }.first ?? 0
                while data.count - end.upperBound < length {
                    let count = recv(connection, &buffer, buffer.count, 0)
                    guard count > 0 else { return nil }
                    data.append(contentsOf: buffer[0..<count])
                }
                let body = data[end.upperBound..<(end.upperBound + length)]
                return Request(method: parts[0], target: parts[1].removingPercentEncoding ?? parts[1], body: Data(body))
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    private static func write(_ answer: Answer, to connection: Int32) {
        var response = Data(
            ("HTTP/1.1 \(answer.status) Scripted\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(answer.body.count)\r\nConnection: close\r\n\r\n").utf8)
        response.append(answer.body)
        response.withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = send(connection, start + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// The request lines a ``ScriptedTablesServer`` read, shared with its thread.
private final class RequestLines: Sendable {
    let lines = Mutex<[String]>([])
}
