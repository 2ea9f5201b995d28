import ArgumentParser
import Foundation
import SyncCLI
import SyncWire
import TodoApp

extension Todo {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an item (offline; queued for the next push).")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's text.") var text: String

        func validate() throws {
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("The text is empty.") }
        }

        func run() async throws {
            let item = try await device.with { try await $0.add(text: text) }
            Terminal.print("added \(Output.line(item))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the items not completed, ordered by text (--all for every item).")
        @OptionGroup var device: DeviceOptions
        @Flag(help: "Include completed items.") var all = false
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let items = try await device.with(readOnly: true) { try await $0.items(all: all) }
            if json { return try Output.json(items) }
            for item in items { Terminal.print(Output.line(item)) }
        }
    }

    struct Complete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark an item completed (an id or a unique prefix of one).")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's id or a unique prefix.") var id: String

        func run() async throws {
            let item = try await device.with { try await $0.edit(id, complete: true) }
            Terminal.print("completed \(Output.line(item))")
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change an item's text and/or completion.")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's id or a unique prefix.") var id: String
        @Option(help: "The new text.") var text: String?
        @Option(help: "true or false.") var complete: Bool?

        func validate() throws {
            guard text != nil || complete != nil else { throw ValidationError("Give --text and/or --complete.") }
        }

        func run() async throws {
            let item = try await device.with { try await $0.edit(id, text: text, complete: complete) }
            Terminal.print("edited \(Output.line(item))")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an item (offline; queued for the next push).")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's id or a unique prefix.") var id: String

        func run() async throws {
            try await device.with { try await $0.delete(id) }
            Terminal.print("deleted \(id)")
        }
    }
}
