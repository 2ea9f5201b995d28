#if canImport(Glibc)
import Foundation
import CEpoll
import Glibc
import Synchronization

/// Change streams held open by bare sockets (`GET /changes`, no client stack), read by one thread
/// through `epoll`: each `change` event's arrival time and `updatedAt` are recorded by stream. What
/// a stream costs the benchmark's process is a descriptor and a small buffer, so the server's
/// memory is what grows.
final class FleetStreams: @unchecked Sendable {
    // @unchecked: `senders` is written only before the reading thread starts and read after it
    // ended; `events` and `failures` sit behind their Mutex.
    /// One event: when it arrived and the `updatedAt` it carried.
    struct Event {
        var arrived: ContinuousClock.Instant
        var updatedAt: String
    }

    private var senders: [BareSender] = []
    /// The user of each stream (its `X-ZUMO-AUTH` token), or `nil`.
    private(set) var users: [String?] = []
    private let events = Mutex<[[Event]]>([])
    private let failures = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?

    /// The streams open.
    var count: Int { senders.count }
    /// Streams that ended or failed.
    var failed: Int { failures.load(ordering: .relaxed) }

    /// Opens `count` more streams of `tables` on `server`, each waiting for its first event
    /// before the next opens (so every stream is registered when this returns).
    func open(_ count: Int, server: URL, tables: String, user: (Int) -> String?) throws {
        precondition(thread == nil, "open the streams before reading them")
        for _ in 0..<count {
            let index = senders.count
            let sender = try BareSender(server: server)
            let token = user(index)
            try sender.write(
                sender.request("GET", "/changes?tables=\(tables)", headers: token.map { ["X-ZUMO-AUTH: \($0)"] } ?? []))
            try Self.awaitFirstEvent(sender.descriptor)
            senders.append(sender)
            users.append(token)
        }
        events.withLock { $0 = Array(repeating: [], count: senders.count) }
    }

    /// Starts the thread that reads every stream.
    func startReading() {
        let thread = Thread { [self] in read() }
        self.thread = thread
        thread.start()
    }

    /// The events stream `index` received so far.
    func received(_ index: Int) -> [Event] { events.withLock { $0[index] } }

    /// Stops reading and closes every stream with a reset (`SO_LINGER` 0), as a device whose
    /// connection is cut: the server lets a reset stream go at once, where a graceful close (a
    /// half-close to HTTP) would be noticed only when a keep-alive write failed.
    func close() {
        stopping.store(true, ordering: .relaxed)
        while thread != nil, !(thread?.isFinished ?? true) { usleep(1_000) }
        var reset = linger(l_onoff: 1, l_linger: 0)
        for sender in senders {
            setsockopt(sender.descriptor, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            sender.close()
        }
        senders = []
    }

    /// Reads what each stream has received so far without waiting (keep-alives, while nothing is
    /// written) and counts the streams that have ended as failed: the check of streams that are
    /// not being read (``startReading()`` not called), so that no thread of the benchmark wakes for
    /// their keep-alives while requests are timed beside them.
    func drain() {
        precondition(thread == nil, "the reading thread reads the streams")
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for sender in senders {
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(sender.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 { continue }
                if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { failures.add(1, ordering: .relaxed) }
                break
            }
        }
    }

    /// Reads until the first `change` event of a new stream has arrived (or fails).
    private static func awaitFirstEvent(_ descriptor: Int32) throws {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !text.contains("event: change") {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError("a change stream closed before its first event: \(text.prefix(200))") }
            text += String(decoding: buffer[..<n], as: UTF8.self)
            guard text.hasPrefix("HTTP/1.1 200") || text.count < 12 else { throw BenchError("a change stream was refused: \(text.prefix(200))") }
        }
    }

    /// Reads the streams through `epoll`: a wake-up costs the streams that have data, not all of
    /// them (`poll` over 1,000 descriptors at each keep-alive would take CPU from the timed
    /// requests on the same two cores).
    private func read() {
        let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard poller >= 0 else {
            failures.add(senders.count, ordering: .relaxed)
            return
        }
        defer { Glibc.close(poller) }
        for (stream, sender) in senders.enumerated() {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u32 = UInt32(stream)
            if epoll_ctl(poller, EPOLL_CTL_ADD, sender.descriptor, &event) != 0 { failures.add(1, ordering: .relaxed) }
        }
        var pending = Array(repeating: "", count: senders.count)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var ready = [epoll_event](repeating: epoll_event(), count: 256)
        while !stopping.load(ordering: .relaxed) {
            let count = epoll_wait(poller, &ready, Int32(ready.count), 50)
            guard count > 0 else { continue }
            let now = ContinuousClock.now
            for index in 0..<Int(count) {
                let stream = Int(ready[index].data.u32)
                let descriptor = senders[stream].descriptor
                let n = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                guard n > 0 else {
                    failures.add(1, ordering: .relaxed)
                    epoll_ctl(poller, EPOLL_CTL_DEL, descriptor, nil)
                    continue
                }
                pending[stream] += String(decoding: buffer[..<n], as: UTF8.self)
                var arrived: [Event] = []
                while let end = pending[stream].range(of: "\n\n") {
                    let block = pending[stream][..<end.lowerBound]
                    if block.contains("event: change"), let stamp = Self.updatedAt(block) { arrived.append(Event(arrived: now, updatedAt: stamp)) }
                    pending[stream].removeSubrange(..<end.upperBound)
                }
                if !arrived.isEmpty { events.withLock { $0[stream] += arrived } }
            }
        }
    }

    /// The `updatedAt` of an event's data line.
    private static func updatedAt(_ block: Substring) -> String? {
        guard let start = block.range(of: "\"updatedAt\":\"") else { return nil }
        let rest = block[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}
#endif
