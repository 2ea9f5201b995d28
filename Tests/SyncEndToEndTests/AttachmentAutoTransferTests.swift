import Foundation
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

@testable import SyncClient

/// A transport whose first `failing` `PATCH`es are answered 503 without reaching the server.
final class FailingPatches: SyncTransport {
    private let base = HTTPSyncTransport()
    private let left: Mutex<Int>

    init(failing: Int) { left = Mutex(failing) }

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        let failing =
            request.method == .patch
            && left.withLock { left in
                defer { left -= 1 }
                return left > 0
            }
        if failing {
            return SyncResponse(statusCode: 503, body: Data(#"{"error":"unavailable"}"#.utf8))
        }
        return try await base.send(request)
    }
}

/// Every path that pushes rows uploads the content of the attachments whose rows it sent: a
/// pull's implicit push as ``SyncContext/push()`` does, and live sync, which also runs the
/// uploads that failed before once their back-off has passed.
@Suite struct AttachmentImplicitUploadTests {
    @Test(arguments: StoreKind.allCases)
    func aPullsImplicitPushUploadsTheContent(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let device = world.device(0, user: "alice")
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            let attachment = try await table.attach(.bytes(AttachmentSyncTests.content), to: "p1", name: "a.jpg", contentType: "image/jpeg")

            #expect(try await table.pull(Query(), queryId: "all") == 1)
            #expect(try await device.pendingOperationsCount == 0)
            #expect(try await device.attachmentTransfers().isEmpty)
            let served = try await world.get(attachment.id, user: "alice")
            #expect(served.statusCode == 200)
            #expect(try digest([UInt8](served.body)) == attachment.sha256)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPullGoesOnWhenTheServerRefusesAnUploadAndParksIt(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let device = world.device(0, user: "alice", transport: PatchRecorder(base: HTTPSyncTransport(), status: 413))
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            try await table.attach(.bytes([1, 2, 3]), to: "p1", name: "a.txt", contentType: "text/plain")

            #expect(try await table.pull(Query(), queryId: "all") == 1)
            let queued = try await device.attachmentTransfers()
            #expect(queued.count == 1 && queued[0].notBefore == AttachmentTransferRecord.parked && queued[0].lastError != nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func liveSyncUploadsADeferredUploadOnceItsBackOffHasPassed(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let device = world.device(0, user: "alice", transport: FailingPatches(failing: 1))
            await device.setAttachmentTransfer(chunkBytes: 1 << 20, retry: AttachmentRetry(attempts: 1))
            let table = try device.syncTable("photos")
            try await table.insert(["id": "p1"])
            let attachment = try await table.attach(.bytes(AttachmentSyncTests.content), to: "p1", name: "a.jpg", contentType: "image/jpeg")
            try await device.push()
            let deferred = try await device.attachmentTransfers()
            #expect(deferred.map(\.attempts) == [1])
            #expect(try await world.get(attachment.id, user: "alice").statusCode == 404)

            // Nothing is written: only the transfer queue's back-off wakes live sync.
            let live = try device.startLiveSync([LiveSyncTable("photos")])
            var events = live.events.makeAsyncIterator()
            let seen = await LiveSyncTests.waitFor(&events) { if case .transferred = $0 { return true } else { return false } }
            await live.stop()
            guard case .transferred(let uploaded, let downloaded) = seen.last else { return }
            #expect(uploaded == 1 && downloaded == 0)
            #expect(Date() >= deferred[0].notBefore, "not before its back-off")
            #expect(try await device.attachmentTransfers().isEmpty)
            let served = try await world.get(attachment.id, user: "alice")
            #expect(try digest([UInt8](served.body)) == attachment.sha256)
        }
    }
}

/// Under an eager download policy a pull of a table's attachment rows queues the downloads of the
/// content that is not here, and the transfer queue (or live sync) fetches it ahead of use; the
/// default stays on demand.
@Suite struct AttachmentEagerDownloadTests {
    @Test(arguments: StoreKind.allCases)
    func anEagerTablesPulledAttachmentsAreQueuedAndDownloaded(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let attachment = try await world.pushedAttachment()
            let deviceB = world.device(1, user: "alice")
            let companion = try deviceB.syncTable("photos__attachments")
            #expect(await deviceB.attachmentDownloadPolicy(forTable: "photos") == .onDemand)
            #expect(try await companion.pull(Query(), queryId: "all") == 1)
            #expect(try await deviceB.attachmentTransfers().isEmpty, "on demand by default")

            try await deviceB.setAttachmentDownloadPolicy(.eager, forTable: "photos")
            #expect(await deviceB.attachmentDownloadPolicy(forTable: "PHOTOS") == .eager)
            try await companion.pull(Query(), queryId: "all")
            let queued = try await deviceB.attachmentTransfers()
            #expect(queued.map(\.attachmentId) == [attachment.id] && queued.map(\.direction) == [.download])

            #expect(try await deviceB.transferAttachments().downloaded == 1)
            #expect(try await deviceB.attachmentTransfers().isEmpty)
            // Here now: read without the network.
            await world.server.stop()
            let content = try await deviceB.syncTable("photos").content(ofAttachment: attachment.id)
            #expect(try await collect(content) == AttachmentSyncTests.content)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func liveSyncDownloadsAnEagerTablesAttachments(kind: StoreKind) async throws {
        try await AttachmentWorld.with(kind) { world in
            let deviceB = world.device(1, user: "alice")
            try await deviceB.setAttachmentDownloadPolicy(.eager, forTable: "photos")
            let live = try deviceB.startLiveSync([LiveSyncTable("photos"), LiveSyncTable("photos__attachments")])
            var events = live.events.makeAsyncIterator()
            _ = await LiveSyncTests.waitFor(&events) { if case .connected = $0 { return true } else { return false } }
            let attachment = try await world.pushedAttachment()

            let seen = await LiveSyncTests.waitFor(&events) { if case .transferred = $0 { return true } else { return false } }
            await live.stop()
            guard case .transferred(let uploaded, let downloaded) = seen.last else { return }
            #expect(uploaded == 0 && downloaded == 1)
            await world.server.stop()
            let content = try await deviceB.syncTable("photos").content(ofAttachment: attachment.id)
            #expect(try await collect(content) == AttachmentSyncTests.content)
        }
    }

    @Test func aPolicyIsSetOnAnItemsTableOnly() async throws {
        try await AttachmentWorld.with(.plain) { world in
            let device = world.device(0, user: "alice")
            for name in ["photos__attachments", "", "bad name"] {
                await #expect(throws: SyncError.invalidTableName) { try await device.setAttachmentDownloadPolicy(.eager, forTable: name) }
            }
            #expect(await device.attachmentDownloadPolicy(forTable: "photos__attachments") == .onDemand)
        }
    }
}
