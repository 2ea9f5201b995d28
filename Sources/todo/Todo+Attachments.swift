import ArgumentParser
import Foundation
import SyncCLI
import SyncClient
import TodoApp

extension Todo {
    struct Attach: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach a file to an item (offline; the metadata is queued for the next push, the content kept encrypted with the store).")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's id or a unique prefix.") var id: String
        @Argument(help: "The file to attach.") var file: String
        @Option(help: ArgumentHelp("The content type (default application/octet-stream).", valueName: "type")) var contentType: String?

        func run() async throws {
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw CLIError.failure("Cannot read \(file).") }
            let attachment = try await device.with { try await $0.attach(id, file: url, contentType: contentType) }
            Terminal.print("attached \(AttachmentOutput.line(attachment))")
        }
    }

    struct Attachments: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an item's attachments: name, size, content type, SHA-256.")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's id or a unique prefix.") var id: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let attachments = try await device.with(readOnly: true) { try await $0.attachments(id) }
            if json { return try Output.json(attachments) }
            for attachment in attachments { Terminal.print(AttachmentOutput.line(attachment)) }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an item's attachment to a new file (an existing file is refused), downloading its content first when it is not here.")
        @OptionGroup var device: DeviceOptions
        @Argument(help: "The item's id or a unique prefix.") var id: String
        @Argument(help: "The attachment's name.") var name: String
        @Argument(help: "The new file.") var path: String

        func run() async throws {
            let url = URL(fileURLWithPath: path)
            guard !FileManager.default.fileExists(atPath: url.path) else { throw CLIError.failure("\(path) exists; nothing was written.") }
            let attachment = try await device.with { try await $0.export(id, name: name, to: url) }
            Terminal.print("exported \(attachment.name) (\(attachment.size) bytes) to \(path)")
        }
    }
}

/// The line of an attachment in listings.
enum AttachmentOutput {
    static func line(_ attachment: Attachment) -> String {
        "\(attachment.name)  \(attachment.size) bytes  \(attachment.contentType)  sha256 \(attachment.sha256)"
    }
}
