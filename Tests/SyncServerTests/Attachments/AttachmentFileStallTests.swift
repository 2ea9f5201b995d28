import Dispatch
import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The content files of an SQLite file's server are read and written off the threads that run
/// requests: uploads stalled in the file system (here: each `.part` file replaced by a FIFO no
/// one reads, so opening it blocks) leave the server answering every other request.
@Suite struct AttachmentFileStallTests {
    /// More stalled uploads than the threads that run Swift tasks.
    static let stalled = ProcessInfo.processInfo.activeProcessorCount + 2

    @Test func stalledContentFilesStallNoOtherRequest() async throws {
        try await TestServer.run(.testing(), reaching: .sqliteFile) { server, access in
            let bytes = AttachmentFixture.content(100, seed: 41)
            try #require(try await server.send(.post, "/tables/photos", object: ["id": "p1"]).status == .created)
            for index in 0..<Self.stalled {
                let row = try AttachmentFixture.row("s\(index)", item: "p1", content: bytes)
                try #require(try await server.send(.post, "/tables/photos__attachments", object: row).status == .created)
                try #require(try await server.upload("photos", "s\(index)", Array(bytes[0..<10]), at: 0).status == .noContent)
            }
            let directory = try #require(access.contentDirectory)
            let fifos = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".part") }.map { "\(directory)/\($0)" }
            try #require(fifos.count == Self.stalled)
            for path in fifos {
                try #require(unlink(path) == 0 && mkfifo(path, 0o600) == 0)
            }
            let release = FIFORelease(fifos)
            // A bound, not a synchronisation: should the server stall, the FIFOs are opened here
            // after 60 s so that the stalled uploads (and the test) can end, and the test fails.
            let watchdog = DispatchSemaphore(value: 0)
            let watch = StallWatch()
            Thread.detachNewThread {
                if watchdog.wait(timeout: .now() + 60) == .timedOut {
                    watch.fired.store(true, ordering: .sequentiallyConsistent)
                    release.open()
                }
            }
            let uploads = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<Self.stalled {
                        group.addTask {
                            _ = try await server.upload("photos", "s\(index)", bytes, at: 0)
                            watch.finished.add(1, ordering: .sequentiallyConsistent)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            var answered = 0
            for _ in 0..<50 where try await server.send(.get, "/tables/photos/p1").status == .ok { answered += 1 }
            let stillStalled = watch.finished.load(ordering: .sequentiallyConsistent) == 0
            watchdog.signal()
            release.open()
            try await uploads.value
            release.close()
            let fired = watch.fired.load(ordering: .sequentiallyConsistent)
            #expect(!fired, "the server answered nothing while content files stalled")
            #expect(answered == 50)
            #expect(stillStalled, "the uploads were stalled all along")
        }
    }
}

/// Whether the watchdog fired, and how many stalled uploads ended.
final class StallWatch: Sendable {
    let fired = Atomic<Bool>(false)
    let finished = Atomic<Int>(0)
}

/// Opens FIFOs for reading (once), which lets their blocked writers go on; closes them at the end.
final class FIFORelease: Sendable {
    private let paths: [String]
    private let descriptors = Mutex<[Int32]?>(nil)

    init(_ paths: [String]) {
        self.paths = paths
    }

    func open() {
        descriptors.withLock { descriptors in
            guard descriptors == nil else { return }
            descriptors = paths.map { Glibc.open($0, O_RDONLY | O_NONBLOCK) }
        }
    }

    func close() {
        descriptors.withLock { descriptors in
            for descriptor in descriptors ?? [] where descriptor >= 0 { _ = Glibc.close(descriptor) }
        }
    }
}
