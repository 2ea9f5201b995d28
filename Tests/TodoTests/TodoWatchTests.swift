import Foundation
import SyncTestSupport
import Testing

/// `todo watch` on a terminal: a change made on another device appears without a key pressed,
/// and Ctrl-C ends it cleanly.
@Suite(.timeLimit(.minutes(2))) struct TodoWatchTests {
    init() throws {
        try #require(todo.isBuilt && ServerProcess.tool.isBuilt, "build the todo and sync-server products first (scripts/test does)")
    }

    /// A command running on a pseudo-terminal made by `script`, read as it draws.
    final class TerminalSession: @unchecked Sendable {
        private let process = SpawnedProcess()
        private let input = Pipe(), output = Pipe()
        private(set) var screen = ""

        init(_ device: Device, _ arguments: [String], server: URL) throws {
            // `exec`: the program itself is the terminal's foreground process, so Ctrl-C reaches it
            // and no shell between.
            let command = "exec " + ([todo.url.path] + device.deviceArguments(server: server) + arguments).map { "'\($0)'" }.joined(separator: " ")
            var environment = todo.baseEnvironment
            environment["CIPHERSYNC_PASSPHRASE"] = device.passphrase
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", command, "/dev/null"]
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
        }

        /// Reads (on a thread of its own) until the screen shows `text` after `offset`, or the
        /// program ends; whether it did.
        func waitFor(_ text: String, after offset: String.Index? = nil) async -> Bool {
            let handle = output.fileHandleForReading
            return await withCheckedContinuation { continuation in
                Thread {
                    while true {
                        let start = offset ?? self.screen.startIndex
                        if self.screen[start...].contains(text) { return continuation.resume(returning: true) }
                        let chunk = handle.availableData
                        if chunk.isEmpty { return continuation.resume(returning: false) }
                        self.screen += String(decoding: chunk, as: UTF8.self).replacingOccurrences(of: "\r", with: "")
                    }
                }.start()
            }
        }

        /// Types bytes on the terminal (Ctrl-C is 0x03).
        func type(_ bytes: [UInt8]) {
            input.fileHandleForWriting.write(Data(bytes))
        }

        /// Waits for the program to end; its exit status and the whole screen.
        func finish() -> (status: Int32, screen: String) {
            try? input.fileHandleForWriting.close()
            screen += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).replacingOccurrences(of: "\r", with: "")
            process.waitUntilExit()
            return (process.terminationStatus, screen)
        }
    }

    @Test func aChangeFromAnotherDeviceAppearsAndCtrlCExitsCleanly() async throws {
        let server = try await ServerProcess.start()
        let a = try Device(), b = try Device()
        defer {
            a.directory.remove()
            b.directory.remove()
        }
        let mine = uniqueText("Water the plants"), theirs = uniqueText("Call the plumber")
        _ = try await b.add(mine)

        let watch = try TerminalSession(b, ["watch"], server: server.url)
        // B's own item, pushed by the watch itself: it reaches A.
        #expect(await watch.waitFor(mine))
        let drawn = watch.screen.endIndex
        _ = try await a.add(theirs)
        try await a.succeed(["push"], server: server.url)
        #expect(await watch.waitFor(theirs, after: drawn), "\(watch.screen)")

        watch.type([0x03])
        #expect(await watch.waitFor("stopped watching"))
        let (status, screen) = watch.finish()
        #expect(status == 0, "\(screen)")
        #expect(screen.contains("todo watch: 2 items"))
        // The store was closed: another command opens it at once and sees both items.
        #expect(try await b.state() == [mine: false, theirs: false])
        try await a.succeed(["pull"], server: server.url)
        #expect(try await a.state() == [mine: false, theirs: false])
        server.stop()
    }
}
