public import Foundation
public import SyncClient

extension TodoDevice {
    /// Attaches a file to an item offline (named by the file's name); the metadata is queued for
    /// the next push, the content is kept in the store's attachment files (encrypted with the store).
    ///
    /// - Parameters:
    ///   - prefix: The item's id or a unique prefix of it.
    ///   - file: The file to attach.
    ///   - contentType: Its content type (default `application/octet-stream`).
    /// - Returns: The new attachment.
    public func attach(_ prefix: String, file: URL, contentType: String? = nil) async throws -> Attachment {
        let id = try await resolveID(prefix)
        return try await table.attach(.file(file), to: id, name: file.lastPathComponent, contentType: contentType ?? "application/octet-stream")
    }

    /// The attachments of an item, by name.
    ///
    /// - Parameter prefix: The item's id or a unique prefix of it.
    public func attachments(_ prefix: String) async throws -> [Attachment] {
        try await table.attachments(of: try await resolveID(prefix))
    }

    /// Writes the content of the item's attachment called `name` to a new file.
    ///
    /// - Parameters:
    ///   - prefix: The item's id or a unique prefix of it.
    ///   - name: The attachment's name.
    ///   - url: The new file (an existing file is refused).
    /// - Returns: The attachment exported.
    /// - Throws: ``TodoError/unknownAttachment(_:)``, ``TodoError/ambiguousAttachment(_:matches:)``, `SyncError`.
    @discardableResult
    public func export(_ prefix: String, name: String, to url: URL) async throws -> Attachment {
        let matches = try await attachments(prefix).filter { $0.name == name }
        guard let attachment = matches.first else { throw TodoError.unknownAttachment(name) }
        guard matches.count == 1 else { throw TodoError.ambiguousAttachment(name, matches: matches.count) }
        try await table.content(ofAttachment: attachment.id).export(to: url)
        return attachment
    }
}
