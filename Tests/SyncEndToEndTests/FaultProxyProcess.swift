import Foundation
import SyncTestSupport

/// The chaos suite's fault-injecting TCP proxy (`Tests/Tools/chaos/proxy.py`) in a child
/// process, on 127.0.0.1 in front of a server's port, driven line by line: a fault's name
/// (`cut`, `reset`, `partition`, `drop`) sets it, `heal` clears it. Faults act on the answers,
/// so a request has reached the server when its answer is lost.
final class FaultProxyProcess: @unchecked Sendable {
    let port: Int
    private let process = SpawnedProcess()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = NSLock()

    static let driver = """
        import sys
        sys.path.insert(0, sys.argv[1])
        from proxy import FaultProxy
        proxy = FaultProxy(int(sys.argv[2]))
        print(proxy.port, flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "heal":
                proxy.heal()
            elif command:
                proxy.set_fault(command)
            print("ok", flush=True)
        proxy.close()
        """

    init(upstream: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.driver, repositoryRoot.appendingPathComponent("Tests/Tools/chaos").path, String(upstream)]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = Int(Self.line(output.fileHandleForReading)) else {
            process.terminate()
            throw ProxyDidNotStart()
        }
        self.port = port
    }

    deinit { close() }

    struct ProxyDidNotStart: Error {}

    /// Sets a fault (or `heal`) and returns once the proxy applied it.
    func set(_ command: String) {
        lock.lock()
        defer { lock.unlock() }
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        _ = Self.line(output.fileHandleForReading)
    }

    func close() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    private static func line(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first, first != 0x0A else { break }
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
