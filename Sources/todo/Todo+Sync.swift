public import ArgumentParser
import Foundation
import SyncCLI
import SyncClient
import SyncKeys
import SyncWire
import TodoApp

extension Todo {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send the queued changes to the server.")
        @OptionGroup var device: DeviceOptions
        @OptionGroup var push: PushOptions

        func run() async throws {
            let pushed = try await device.with { d in
                try await push.apply(to: d)
                return try await Output.withProgress(d) { try await d.push() }
            }
            Terminal.print("pushed \(pushed) change\(pushed == 1 ? "" : "s")")
        }
    }

    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Fetch the server's changes since the last pull (pushes queued changes first).")
        @OptionGroup var device: DeviceOptions

        func run() async throws {
            let pulled = try await device.with { d in try await Output.withProgress(d) { try await d.pull() } }
            Terminal.print("pulled \(pulled) item\(pulled == 1 ? "" : "s")")
        }
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Push, then pull. Offline, it says how many changes stay queued and exits 5.")
        @OptionGroup var device: DeviceOptions
        @OptionGroup var push: PushOptions

        func run() async throws {
            let result = try await device.with { d in
                try await push.apply(to: d)
                return try await Output.withProgress(d) { try await d.sync() }
            }
            Terminal.print(
                "pushed \(result.pushed) change\(result.pushed == 1 ? "" : "s"), pulled \(result.pulled) item\(result.pulled == 1 ? "" : "s")")
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the local copies of the items (refused while changes are queued unless --force, which drops them).")
        @OptionGroup var device: DeviceOptions
        @Flag(help: "Also drop the queued changes.") var force = false

        func run() async throws {
            try await device.with { try await $0.purge(force: force) }
            Terminal.print("purged the local items")
        }
    }

    struct Pending: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the queued changes and their errors.")
        @OptionGroup var device: DeviceOptions
        @Flag(help: "Print JSON.") var json = false

        struct Listing: Encodable {
            struct Operation: Encodable { var id: Int64, kind: String, itemId: String }
            struct Failure: Encodable {
                var operationId: Int64, itemId: String, statusCode: Int?, message: String, item: JSONObject?, serverItem: JSONObject?
            }
            var operations: [Operation]
            var errors: [Failure]
        }

        func run() async throws {
            let listing = try await device.with(readOnly: true) { d in
                Listing(
                    operations: try await d.context.pendingOperations().map { .init(id: $0.id, kind: "\($0.kind)", itemId: $0.itemId) },
                    errors: try await d.context.operationErrors().map {
                        .init(
                            operationId: $0.operationId, itemId: $0.itemId, statusCode: $0.statusCode, message: $0.message, item: $0.item,
                            serverItem: $0.serverItem)
                    })
            }
            if json { return try Output.json(listing) }
            if listing.operations.isEmpty { Terminal.print("nothing queued") }
            for op in listing.operations { Terminal.print("\(op.kind) \(Output.short(op.itemId))") }
            for error in listing.errors {
                Terminal.print("  error on \(Output.short(error.itemId)): HTTP \(error.statusCode.map(String.init) ?? "-") \(error.message)")
            }
        }
    }

    struct Conflicts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve push conflicts: use client (keep yours), use server (take theirs) or cancel (drop yours).",
            discussion: """
                On a terminal it asks for each conflict; scripts pass --resolve. After resolving it pushes. \
                An item deleted on the server (or missing there) is restored with your change (client, restore) \
                or its delete is accepted (server, cancel, accept).
                """)
        @OptionGroup var device: DeviceOptions
        @Option(help: "client, server, cancel, restore or accept, for every conflict.") var resolve: TodoDevice.Resolution?
        @Flag(help: "Print the conflicts as JSON and change nothing.") var json = false

        func run() async throws {
            try await device.with { d in
                let conflicts = try await d.context.operationErrors()
                if json {
                    let shown = conflicts.map {
                        [
                            "itemId": JSONValue.string($0.itemId), "conflict": $0.conflict.map { .string($0.rawValue) } ?? .null,
                            "local": $0.item.map(JSONValue.object) ?? .null, "server": $0.serverItem.map(JSONValue.object) ?? .null,
                        ]
                    }
                    return try Output.json(shown)
                }
                if conflicts.isEmpty { return Terminal.print("no conflicts") }
                guard resolve != nil || Terminal.isInputTerminal else {
                    throw CLIError.usage("Not on a terminal: pass --resolve client|server|cancel.")
                }
                for conflict in conflicts {
                    let status = conflict.statusCode.map(String.init) ?? "-"
                    Terminal.print("conflict on \(Output.short(conflict.itemId)) (\(conflict.kind), HTTP \(status)\(Self.label(conflict.conflict)))")
                    Terminal.print("  local:  \(Self.describe(conflict.item))")
                    Terminal.print("  server: \(Self.describe(conflict.serverItem))")
                    let gone = conflict.conflict == .deletedOnServer || conflict.conflict == .missingOnServer
                    var done: TodoDevice.Resolution?
                    while done == nil {
                        let choice = try resolve ?? (gone ? Self.askRestore() : Self.ask())
                        do {
                            done = try await d.resolve(conflict, with: choice)
                        } catch let error as TodoError where error == TodoError.resolutionWouldRepeat && resolve == nil {
                            // On a terminal, a choice that cannot work is said, and asked again.
                            Terminal.print("  \(TodoError.resolutionWouldRepeat(itemId: Output.short(conflict.itemId), resolution: choice.rawValue))")
                        }
                    }
                    Terminal.print("  resolved: \(done?.rawValue ?? "")")
                }
                let pushed = try await d.push()
                Terminal.print("pushed \(pushed) change\(pushed == 1 ? "" : "s")")
            }
        }

        static func label(_ conflict: TableOperationError.Conflict?) -> String {
            switch conflict {
            case .deletedOnServer?: return ", deleted on the server"
            case .missingOnServer?: return ", not on the server"
            case .changedOnServer?, nil: return ""
            }
        }

        static func describe(_ item: JSONObject?) -> String {
            guard let item else { return "(none)" }
            return "\"\(item["text"]?.stringValue ?? "")\"\(item["complete"]?.boolValue == true ? " (completed)" : "")"
        }

        static func ask() throws -> TodoDevice.Resolution {
            try ask(
                "  use [c]lient, [s]erver or c[a]ncel? ",
                ["c": .client, "client": .client, "s": .server, "server": .server, "a": .cancel, "cancel": .cancel])
        }

        static func askRestore() throws -> TodoDevice.Resolution {
            try ask(
                "  [r]estore it with your change, or [a]ccept the delete? ", ["r": .restore, "restore": .restore, "a": .accept, "accept": .accept])
        }

        /// Asks until one of `answers` is typed.
        static func ask(_ question: String, _ answers: [String: TodoDevice.Resolution]) throws -> TodoDevice.Resolution {
            while true {
                Terminal.write(question, to: STDOUT_FILENO)
                guard let answer = Swift.readLine()?.lowercased() else { throw CLIError.usage("No answer given.") }
                if let choice = answers[answer] { return choice }
            }
        }
    }
}

extension TodoDevice.Resolution: ExpressibleByArgument {}
