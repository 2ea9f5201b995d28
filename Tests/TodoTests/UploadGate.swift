import Foundation
import SyncTestSupport

/// A TCP proxy on 127.0.0.1 in front of a server's port, in a child process, that reads the HTTP
/// requests passing through it: it reports the `Upload-Offset` of every `PATCH` as a line
/// `patch N` and, with `holdAt`, never forwards the n-th `PATCH` (it reports `held N` and keeps
/// the connection open), so a test knows the server holds exactly the chunks before it.
final class UploadGate: @unchecked Sendable {
    let port: Int
    private let process = SpawnedProcess()
    private let output = Pipe()

    static let driver = """
        import socket, sys, threading
        upstream, hold_at = int(sys.argv[1]), int(sys.argv[2])
        lock = threading.Lock()
        patches = [0]
        def say(line):
            with lock:
                print(line, flush=True)
        def close(*sockets):
            for s in sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        def answers(server, client):
            try:
                while True:
                    data = server.recv(65536)
                    if not data:
                        break
                    client.sendall(data)
            except OSError:
                pass
            close(server, client)
        def requests(client, server):
            buffer = b""
            try:
                while True:
                    while b"\\r\\n\\r\\n" not in buffer:
                        data = client.recv(65536)
                        if not data:
                            return
                        buffer += data
                    head, buffer = buffer.split(b"\\r\\n\\r\\n", 1)
                    lines = head.decode("latin-1").split("\\r\\n")
                    headers = dict((k.strip().lower(), v.strip()) for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l))
                    if "chunked" in headers.get("transfer-encoding", ""):
                        say("chunked request")
                        return
                    length = int(headers.get("content-length", "0"))
                    while len(buffer) < length:
                        data = client.recv(65536)
                        if not data:
                            return
                        buffer += data
                    body, buffer = buffer[:length], buffer[length:]
                    if lines[0].startswith("PATCH "):
                        with lock:
                            patches[0] += 1
                            count = patches[0]
                        offset = headers.get("upload-offset", "-")
                        if count == hold_at:
                            say("held " + offset)
                            threading.Event().wait()
                        say("patch " + offset)
                    server.sendall(head + b"\\r\\n\\r\\n" + body)
            except OSError:
                pass
            finally:
                close(client, server)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        print(listener.getsockname()[1], flush=True)
        while True:
            client, _ = listener.accept()
            server = socket.create_connection(("127.0.0.1", upstream))
            threading.Thread(target=requests, args=(client, server), daemon=True).start()
            threading.Thread(target=answers, args=(server, client), daemon=True).start()
        """

    /// Starts the gate in front of `upstream`; `holdAt` (from 1) names the `PATCH` it holds, 0 none.
    init(upstream: Int, holdAt: Int = 0) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.driver, String(upstream), String(holdAt)]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = Int(Self.line(output.fileHandleForReading) ?? "") else {
            process.terminate()
            throw GateDidNotStart()
        }
        self.port = port
    }

    deinit { close() }

    struct GateDidNotStart: Error {}

    var url: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    /// Reads the gate's reports until one starts with `prefix` (blocking: call on a thread of its
    /// own); all of them, that one last, or those up to the end of the output.
    func reports(until prefix: String) -> [String] {
        var lines: [String] = []
        while let line = Self.line(output.fileHandleForReading) {
            lines.append(line)
            if line.hasPrefix(prefix) { break }
        }
        return lines
    }

    /// Stops the gate and returns the reports it had not yet handed over.
    func stop() -> [String] {
        close()
        return reports(until: "\u{0}")
    }

    func close() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    private static func line(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if first == 0x0A { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
