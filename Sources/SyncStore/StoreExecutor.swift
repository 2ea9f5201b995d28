import Dispatch

/// The serial executor of one ``SQLiteStore``: the store's jobs run one at a time on its own
/// dispatch queue, never on a thread of Swift's cooperative pool.
///
/// SQLite calls block on the disk, and opening an encrypted store derives a key (scrypt with
/// N = 2^17 takes about half a second). The cooperative pool has one thread per core, so blocking
/// work there stalls every other task of the process; a serial dispatch queue gets a thread of its
/// own whenever it has work. (GRDB's `DispatchQueueActor` is the same idea.)
///
/// `@unchecked Sendable`: every property is set once in `init`; dispatch queues and their specific
/// keys are safe to use from any thread.
final class StoreExecutor: SerialExecutor, @unchecked Sendable {
    /// The queue every job of the store runs on.
    let queue: DispatchQueue
    /// Marks `queue`, so code can ask whether it runs on it.
    private let marker = DispatchSpecificKey<Bool>()

    /// A new executor over a new serial queue.
    ///
    /// - Parameter label: The queue's label (shown by debuggers).
    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: marker, value: true)
    }

    /// Runs `job` on the queue, after the jobs enqueued before it.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(on: self.asUnownedSerialExecutor())
        }
    }

    /// This executor, unowned (the store keeps it alive).
    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Stops the process unless the caller runs on the queue (`assumeIsolated` asks this).
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    /// Whether the caller runs on this executor's queue.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: marker) ?? false
    }
}
