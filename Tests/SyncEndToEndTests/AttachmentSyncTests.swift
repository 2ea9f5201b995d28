import Foundation
import HTTPTypes
import Logging
import SyncKeys
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

@testable import SyncClient

/// Two of a user's devices and a real server on 127.0.0.1, on per-user tables: a device attaches
/// offline, its push sends the rows and then the content; another device pulls the rows and
/// reads the content, downloaded on demand; another user sees nothing.
@Suite struct AttachmentSyncTests {
    static let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }

    @Test(arguments: StoreKind.allCases)
    func aPushSendsTheContentAndAnotherDeviceDownloadsItOnDemand(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let deviceA = world.device(0, user: "alice")
            let table = try deviceA.syncTable("photos")
            try await table.insert(["id": "p1", "title": "porch"])
            let attachment = try await table.attach(.bytes(Self.content), to: "p1", name: "porch.jpg", contentType: "image/jpeg")
            #expect(try await deviceA.attachmentTransfers().map(\.direction) == [.upload])

            try await deviceA.push()
            #expect(try await deviceA.attachmentTransfers().isEmpty)
            let served = try await world.get(attachment.id, user: "alice")
            #expect(served.statusCode == 200)
            #expect(try digest([UInt8](served.body)) == attachment.sha256)

            let deviceB = world.device(1, user: "alice")
            let tableB = try deviceB.syncTable("photos")
            #expect(try await tableB.pull(Query(), queryId: "all") == 1)
            #expect(try await deviceB.syncTable(tableB.attachmentsTable).pull(Query(), queryId: "all") == 1)
            #expect(try await tableB.attachments(of: "p1").map(\.id) == [attachment.id])
            #expect(try await collect(try await tableB.content(ofAttachment: attachment.id)) == Self.content)
            // Stored now: read again without the network.
            await world.server.stop()
            #expect(try await collect(try await tableB.content(ofAttachment: attachment.id)) == Self.content)
            #expect(try world.storedFiles(1).contains { $0.range(of: Data(Self.content.prefix(4096))) != nil } == (kind == .plain))
        }
    }

    @Test func anotherUsersDeviceCannotReadTheContent() async throws {
        try await AttachmentWorld.with(.encrypted) { world in
            let alice = world.device(0, user: "alice")
            let table = try alice.syncTable("photos")
            try await table.insert(["id": "p1"])
            let attachment = try await table.attach(.bytes(Self.content), to: "p1", name: "porch.jpg", contentType: "image/jpeg")
            try await alice.push()

            let bob = world.device(1, user: "bob")
            let bobs = try bob.syncTable("photos")
            #expect(try await bob.syncTable(bobs.attachmentsTable).pull(Query(), queryId: "all") == 0)
            #expect(try await world.get(attachment.id, user: "bob").statusCode == 404)
            #expect(try await world.get(attachment.id, user: "alice").statusCode == 200)
        }
    }
}

/// An upload whose answer is cut in the middle resumes at the server's offset.
@Suite struct AttachmentUploadResumeTests {
    @Test(arguments: StoreKind.allCases)
    func aCutUploadResumesFromTheServersOffset(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let proxy = try FaultProxyProcess(upstream: world.server.url.port ?? 0)
            defer { proxy.close() }
            let url = try #require(URL(string: "http://127.0.0.1:\(proxy.port)"))
            // The answer to the second PATCH is cut; the network comes back during the wait.
            let recorder = PatchRecorder(base: HTTPSyncTransport()) { count in if count == 2 { proxy.set("cut") } }
            let device = world.device(0, user: "alice", url: url, transport: recorder)
            var retry = AttachmentRetry(attempts: 4, firstDelay: .milliseconds(1), longestDelay: .milliseconds(1))
            retry.sleep = { _ in proxy.set("heal") }
            await device.setAttachmentTransfer(chunkBytes: 64 << 10, retry: retry)
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            let attachment = try await table.attach(
                .bytes(AttachmentSyncTests.content), to: "p1", name: "porch.jpg", contentType: "image/jpeg")
            try await device.push()

            let chunk = Int64(64 << 10)
            // The cut chunk reached the server: after the HEAD the upload goes on from there.
            #expect(recorder.offsets == Array(stride(from: 0, to: Int64(AttachmentSyncTests.content.count), by: Int(chunk))))
            #expect(recorder.heads >= 2)
            #expect(try await device.attachmentTransfers().isEmpty)
            let served = try await world.get(attachment.id, user: "alice")
            #expect(try digest([UInt8](served.body)) == attachment.sha256)
        }
    }
}

/// An on-demand download whose answer is cut in the middle asks for the rest by range.
@Suite struct AttachmentDownloadResumeTests {
    @Test(arguments: StoreKind.allCases)
    func aCutDownloadResumesWithARange(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let attachment = try await world.pushedAttachment()
            let proxy = try FaultProxyProcess(upstream: world.server.url.port ?? 0)
            defer { proxy.close() }
            let url = try #require(URL(string: "http://127.0.0.1:\(proxy.port)"))
            // The answer to the second ranged GET is cut; the network comes back during the wait.
            let recorder = PatchRecorder(base: HTTPSyncTransport(), onGet: { count in if count == 2 { proxy.set("cut") } })
            let deviceB = world.device(1, user: "alice", url: url, transport: recorder)
            var retry = AttachmentRetry(attempts: 4, firstDelay: .milliseconds(1), longestDelay: .milliseconds(1))
            retry.sleep = { _ in proxy.set("heal") }
            let chunk = 64 << 10
            await deviceB.setAttachmentTransfer(chunkBytes: chunk, retry: retry)
            let tableB = try deviceB.syncTable("photos")
            #expect(try await deviceB.syncTable(tableB.attachmentsTable).pull(Query(), queryId: "all") == 1)
            #expect(try await collect(try await tableB.content(ofAttachment: attachment.id)) == AttachmentSyncTests.content)

            let size = AttachmentSyncTests.content.count
            let starts = stride(from: 0, to: size, by: chunk).map { $0 }
            let expected = ([starts[0], starts[1]] + starts.dropFirst()).map { "bytes=\($0)-\(min($0 + chunk, size) - 1)" }
            #expect(recorder.ranges == expected, "the cut range is asked again, nothing before it")
        }
    }
}

/// Transfers the server refuses for good end in a typed error and are parked; transfers that
/// fail for now wait for their back-off. Neither is tried again at once.
@Suite struct AttachmentTransferFailureTests {
    @Test(arguments: StoreKind.allCases)
    func aRefusedUploadIsATypedErrorAndIsNotTriedAgain(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let transport = PatchRecorder(base: HTTPSyncTransport(), status: 413)
            let device = world.device(0, user: "alice", transport: transport)
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            try await table.attach(.bytes([1, 2, 3]), to: "p1", name: "a.txt", contentType: "text/plain")
            let error = await #expect(throws: SyncError.attachmentTransferFailed) { try await device.push() }
            #expect(error?.statusCode == 413)
            #expect(error?.failedTransfers.map(\.direction) == [.upload])
            #expect(try await device.pendingOperationsCount == 0, "the rows were pushed")
            let queued = try await device.attachmentTransfers()
            #expect(queued.count == 1 && queued[0].notBefore > Date().addingTimeInterval(86_400 * 365) && queued[0].lastError != nil)

            let summary = try await device.transferAttachments()
            try await device.push()
            #expect(summary == AttachmentTransferSummary())
            #expect(transport.offsets == [0], "the parked upload is not sent again")
        }
    }

    @Test func anUnreachableServerDefersTheUploadWithItsBackOff() async throws {
        try await AttachmentWorld.with(.encrypted) { world in
            let transport = PatchRecorder(base: HTTPSyncTransport(), status: 503)
            let device = world.device(0, user: "alice", transport: transport)
            await device.setAttachmentTransfer(chunkBytes: 1 << 20, retry: AttachmentRetry(attempts: 1))
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            try await table.attach(.bytes([1, 2, 3]), to: "p1", name: "a.txt", contentType: "text/plain")
            let beforePush = Date()
            try await device.push()
            let queued = try await device.attachmentTransfers()
            #expect(queued.count == 1 && queued[0].attempts == 1 && queued[0].notBefore >= beforePush.addingTimeInterval(2))

            #expect(try await device.readyAttachmentTransfers(now: beforePush.addingTimeInterval(1)).isEmpty, "not before its back-off")
            #expect(transport.offsets == [0])
            // Once its back-off has passed it is tried again; a 5xx again backs off longer.
            let summary = try await device.transferAttachments(now: queued[0].notBefore)
            #expect(summary.deferred.map(\.attempts) == [2])
            #expect(transport.offsets == [0, 0])
        }
    }

    @Test func withoutAnAnswerTheRunStopsAndTheOtherUploadsWaitUntouched() async throws {
        try await AttachmentWorld.with(.plain) { world in
            let transport = PatchRecorder(base: HTTPSyncTransport(), headsFail: true)
            let device = world.device(0, user: "alice", transport: transport)
            await device.setAttachmentTransfer(chunkBytes: 1 << 20, retry: AttachmentRetry(attempts: 1))
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            try await table.attach(.bytes([1, 2, 3]), to: "p1", name: "a.txt", contentType: "text/plain")
            try await table.attach(.bytes([4, 5, 6]), to: "p1", name: "b.txt", contentType: "text/plain")
            try await device.push()
            #expect(transport.heads == 1, "the second upload is not tried once the server did not answer")
            let queued = try await device.attachmentTransfers()
            #expect(queued.map(\.attempts).sorted() == [0, 1])
        }
    }
}
