import ArgumentParser
import SyncCLI
import SyncClient
import TodoApp

/// How `push` and `sync` send the queue.
struct PushOptions: ParsableArguments {
    /// `--push-batching`'s values.
    enum Batching: String, ExpressibleByArgument, CaseIterable {
        case auto, off

        var batching: PushBatching { self == .auto ? .automatic : .off }
    }

    @Option(help: ArgumentHelp("auto: batches where the server advertises the batch extension; off: one request per change.", valueName: "auto|off"))
    var pushBatching = Batching.off
    @Option(help: ArgumentHelp("Requests in flight at once, 1 to 16.", valueName: "n"))
    var pushParallelism = 1

    func validate() throws {
        guard (1...SyncContext.maximumPushParallelism).contains(pushParallelism) else {
            throw ValidationError("--push-parallelism must be from 1 to \(SyncContext.maximumPushParallelism)")
        }
    }

    /// Sets the options on the device.
    func apply(to device: TodoDevice) async throws {
        try await device.setPushOptions(batching: pushBatching.batching, parallelism: pushParallelism)
    }
}

extension Todo {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the changes queued and what the server advertises (the batch extension). Offline, it exits 5.")
        @OptionGroup var device: DeviceOptions
        @Flag(help: "Print JSON.") var json = false

        struct Shown: Encodable {
            struct Batch: Encodable { var maxOperations: Int, maxBytes: Int? }
            var pending: Int
            var batch: Batch?
        }

        func run() async throws {
            let status = try await device.with { try await $0.status() }
            let batch = status.batch.map { Shown.Batch(maxOperations: $0.maxOperations, maxBytes: $0.maxBytes) }
            if json { return try Output.json(Shown(pending: status.pendingChanges, batch: batch)) }
            Terminal.print("\(status.pendingChanges) change\(status.pendingChanges == 1 ? "" : "s") queued")
            if let batch {
                let bytes = batch.maxBytes.map { ", \($0) bytes" } ?? ""
                Terminal.print("batch extension: up to \(batch.maxOperations) changes per request\(bytes) (--push-batching auto uses it)")
            } else {
                Terminal.print("batch extension: not offered (one request per change)")
            }
        }
    }
}
