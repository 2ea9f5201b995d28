#if os(Linux)
import NIOCore

/// A task executor that runs its jobs on one NIO event loop.
///
/// A push that prefers it (`withTaskExecutorPreference`) runs where its connection's I/O runs:
/// the request is written, its answer read and the waiting task resumed on one thread, with no
/// wake-up of another thread between the push and the event loop for each request. Jobs enqueued
/// from the loop itself are queued without waking it.
final class EventLoopExecutor: TaskExecutor {
    /// The loop the jobs run on.
    let loop: any EventLoop

    /// Creates an executor for `loop`.
    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
#endif
