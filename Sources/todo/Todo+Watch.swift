import ArgumentParser
import Dispatch
import Foundation
import SyncCLI
import SyncClient
import SyncWire
import TodoApp

extension Todo {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the list and keep it up to date as it changes here or on other devices (Ctrl-C to quit).")
        @OptionGroup var device: DeviceOptions
        @Flag(help: "Include completed items.") var all = false

        func run() async throws {
            let todo = try await device.open()
            // After the passphrase is read (reading it handles SIGINT its own way).
            let interrupted = Interrupt.stream()
            do {
                let live = try todo.startLiveSync()
                let status = Task { for await event in live.events { Screen.status(event) } }
                let drawing = Task {
                    do {
                        for try await items in todo.watchItems(all: all) { Screen.draw(items) }
                    } catch {
                        Terminal.printError("todo: \(error)")
                    }
                }
                // Ctrl-C: stop drawing and syncing, then close the store.
                for await _ in interrupted { break }
                drawing.cancel()
                await drawing.value
                await live.stop()
                await status.value
                try await todo.close()
                Terminal.print("\nstopped watching")
            } catch {
                try? await todo.close()
                throw DeviceOptions.exit(for: error)
            }
        }
    }
}

/// SIGINT as a stream: the signal is ignored by the process and delivered here instead, so the
/// program can end in order.
private enum Interrupt {
    nonisolated(unsafe) private static var source: (any DispatchSourceSignal)?

    static func stream() -> AsyncStream<Void> {
        signal(SIGINT, SIG_IGN)
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "todo.watch.interrupt"))
        source.setEventHandler { continuation.yield() }
        source.resume()
        Self.source = source
        return stream
    }
}

/// Drawing the list: on a terminal the screen is cleared and drawn again; otherwise each state
/// of the list is printed after a separator line.
private enum Screen {
    static let isTerminal = isatty(STDOUT_FILENO) == 1

    static func draw(_ items: [JSONObject]) {
        var text = isTerminal ? "\u{1B}[H\u{1B}[2J" : "--\n"
        text += "todo watch: \(items.count) item\(items.count == 1 ? "" : "s") (Ctrl-C to quit)\n"
        for item in items { text += Output.line(item) + "\n" }
        Terminal.write(text, to: STDOUT_FILENO)
    }

    static func status(_ event: LiveSyncEvent) {
        switch event {
        case .disconnected(let error): Terminal.printError("todo: not connected (\(error.reason ?? "no answer")), retrying")
        case .pollingFallback: Terminal.printError("todo: the server sends no change notifications; pulling every 30 s")
        case .failed(let error): Terminal.printError("todo: \(error.reason ?? "sync failed")")
        case .connected, .pushed, .pulled, .transferred: break
        }
    }
}
