import Foundation
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncClient

/// A download cut off midway keeps what is safely on disk (whole sealed segments in an encrypted
/// store, never plaintext; every byte in a plain one) and the next call asks only for the rest by
/// range; the SHA-256 of the whole content is still checked.
@Suite struct AttachmentDownloadAcrossCallsTests {
    static let chunk = 50_000

    /// Alice's second device pulls the attachment's row through `proxy` and reads the content:
    /// the answers from the third ranged GET on are cut and the network stays down, so the read
    /// fails after two chunks of `chunk` bytes arrived.
    static func cutDownload(
        of attachment: SyncClient.Attachment, in world: AttachmentWorld, through proxy: FaultProxyProcess
    ) async throws -> (SyncTable, PatchRecorder) {
        let url = try #require(URL(string: "http://127.0.0.1:\(proxy.port)"))
        let recorder = PatchRecorder(base: HTTPSyncTransport(), onGet: { count in if count == 3 { proxy.set("cut") } })
        let deviceB = world.device(1, user: "alice", url: url, transport: recorder)
        var retry = AttachmentRetry(attempts: 2, firstDelay: .milliseconds(1), longestDelay: .milliseconds(1))
        retry.sleep = { _ in }
        await deviceB.setAttachmentTransfer(chunkBytes: chunk, retry: retry)
        let tableB = try deviceB.syncTable("photos")
        #expect(try await deviceB.syncTable(tableB.attachmentsTable).pull(Query(), queryId: "all") == 1)
        await #expect(throws: SyncError.attachmentContentUnavailable) { try await tableB.content(ofAttachment: attachment.id) }
        return (tableB, recorder)
    }

    @Test(arguments: StoreKind.allCases)
    func aDownloadCutOffGoesOnByRangeInTheNextCall(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let content = AttachmentSyncTests.content
            let attachment = try await world.pushedAttachment()
            let proxy = try FaultProxyProcess(upstream: world.server.url.port ?? 0)
            defer { proxy.close() }
            let (tableB, recorder) = try await Self.cutDownload(of: attachment, in: world, through: proxy)

            // Two chunks arrived: an encrypted store keeps the one whole 64 KiB segment they fill.
            let kept = kind == .encrypted ? 65_536 : 2 * Self.chunk
            let vault = world.stores[1].1.attachmentVault
            let partial = try await world.stores[1].1.readAttachments { _, rows in try rows.partial(table: "photos", id: attachment.id) }
            #expect(partial?.length == Int64(kept))
            let onDisk = try world.storedFiles(1)
            for window in [content[0..<4096], content[70_000..<74_096]] {
                #expect(onDisk.contains { $0.range(of: Data(window)) != nil } == (kind == .plain), "plaintext on disk only in a plain store")
            }
            #expect(try filePaths(under: vault.directory).count == 1, "the suspended download's file")

            proxy.set("heal")
            let before = recorder.ranges.count
            #expect(try await collect(try await tableB.content(ofAttachment: attachment.id)) == content)
            let second = Array(recorder.ranges.dropFirst(before))
            let starts = Array(stride(from: kept, to: content.count, by: Self.chunk))
            #expect(second == starts.map { "bytes=\($0)-\(min($0 + Self.chunk, content.count) - 1)" }, "only the rest is asked for")
            #expect(try await world.stores[1].1.readAttachments { _, rows in try rows.partials() }.isEmpty)
            #expect(try filePaths(under: vault.directory).count == 1, "the attachment's file alone")
        }
    }

    @Test func aSuspendedDownloadWhoseFileWasDamagedStartsAgainFromNothing() async throws {
        try await AttachmentWorld.with(.encrypted) { world in
            let content = AttachmentSyncTests.content
            let attachment = try await world.pushedAttachment()
            let proxy = try FaultProxyProcess(upstream: world.server.url.port ?? 0)
            defer { proxy.close() }
            let (tableB, recorder) = try await Self.cutDownload(of: attachment, in: world, through: proxy)

            // A byte of the kept segment flipped: its tag fails, the kept part is dropped.
            let store = world.stores[1].1
            let partial = try #require(try await store.readAttachments { _, rows in try rows.partial(table: "photos", id: attachment.id) })
            let file = store.attachmentVault.directory.appendingPathComponent(partial.file)
            var bytes = try Data(contentsOf: file)
            bytes[100] ^= 0x01
            try bytes.write(to: file)

            proxy.set("heal")
            let before = recorder.ranges.count
            #expect(try await collect(try await tableB.content(ofAttachment: attachment.id)) == content)
            #expect(recorder.ranges.dropFirst(before).first == "bytes=0-\(Self.chunk - 1)", "from the start again")
            #expect(try await store.readAttachments { _, rows in try rows.partials() }.isEmpty)
        }
    }
}
