import ArgumentParser
import NIOCore
import NIOPosix

// Parsed here, before any task starts, to choose where Swift concurrency's jobs run.
let command: SyncServerCommand
do {
    var parsed = try SyncServerCommand.parseAsRoot()
    guard let server = parsed as? SyncServerCommand else {
        try parsed.run()  // --help and the like
        SyncServerCommand.exit()
    }
    command = server
} catch {
    SyncServerCommand.exit(withError: error)
}
// Tables in memory or in PostgreSQL: Swift concurrency's jobs run on the server's event loops, not
// on a pool of their own, so a request's handler and the storage run on the thread that read the
// request, with no hand-off between threads (docs/performance.md, "The server"). Not for an SQLite file,
// whose every commit waits for the disk: the event loops would wait with it.
if command.tasksRunOnEventLoops {
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
}
/// Runs the command (a function: from top-level code a plain call would pick the synchronous `run`).
func serve(_ command: SyncServerCommand) async {
    do {
        try await command.run()
    } catch {
        SyncServerCommand.exit(withError: error)
    }
}
await serve(command)
