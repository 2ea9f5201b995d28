import ArgumentParser
import NIOCore
import NIOPosix

// Swift concurrency's jobs run on the server's event loops, not on a pool of their own: a request's
// handler and the storage actor then run on the thread that read the request, with no hand-off
// between threads on the way in and out (README, "Performance"). Done before any task starts.
NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
/// The command's asynchronous entry (from top-level code a plain call would pick the synchronous one).
func runCommand() async { await SyncServerCommand.main() }
await runCommand()
