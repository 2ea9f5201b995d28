import ArgumentParser
import Foundation
import Logging
import SyncCLI
import SyncServer
import TodoApp

extension Todo {
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the whole story: a server in this process, two encrypted devices, offline edits, a conflict, a soft delete, key changes.")

        /// Starts the sync server in this process on a free port, runs the story against it, and
        /// stops the server, whatever the story's outcome.
        func run() async throws {
            var logger = Logger(label: "demo-server", factory: ServerLogHandler.init)
            logger.logLevel = .critical
            let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger))
            Terminal.print("Started the sync server in this process at \(server.url.absoluteString) (embedded SQLite, soft delete on).")
            let ok: Bool
            do {
                ok = try await TodoApp.Demo(output: { Terminal.print($0) }).run(server: server.url)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            if !ok { throw ExitCode.failure }
        }
    }
}
