import Foundation
import HTTPTypes
import SyncTestSupport
import SyncWire
import Testing

/// The executable's `--max-attachment-bytes`: documented in `--help`, a negative value refused
/// with exit code 64 and a message naming the option, and the limit applied to metadata rows.
@Suite struct AttachmentLimitFlagTests {
    @Test func helpNamesTheOptionAndANegativeValueIsRefused() throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let help = try runProgram(ServerProcess.tool.url.path, ["--help"])
        #expect(help.status == 0 && help.output.contains("--max-attachment-bytes <n>"))
        let refused = try runProgram(ServerProcess.tool.url.path, ["--max-attachment-bytes=-1"])
        #expect(refused.status == 64, "\(refused.error)")
        #expect(refused.error.contains("--max-attachment-bytes must not be negative"), "\(refused.error)")
    }

    @Test func theLimitIsTheLargestSizeAccepted() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start(arguments: ["--max-attachment-bytes", "10"])
        defer { server.stop() }
        let client = HTTPTestClient()
        do {
            try #require(try await client.send(.post, server.url, "/tables/photos", object: ["id": "p1"]).status == .created)
            let large = try AttachmentFixture.row("a1", item: "p1", content: AttachmentFixture.content(11))
            let refused = try await client.send(.post, server.url, "/tables/photos__attachments", object: large)
            #expect(refused.status == .contentTooLarge && refused.errorMessage == "The attachment is larger than the limit of 10 bytes")
            let fits = try AttachmentFixture.row("a2", item: "p1", content: AttachmentFixture.content(10))
            #expect(try await client.send(.post, server.url, "/tables/photos__attachments", object: fits).status == .created)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
