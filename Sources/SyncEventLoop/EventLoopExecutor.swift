package import NIOCore

/// A task executor that runs its jobs on one NIO event loop.
///
/// A task that prefers it (`withTaskExecutorPreference`) runs where its connection's I/O runs: a
/// write goes straight to the socket (NIO writes at once from the channel's own loop) and an
/// answer resumes the waiting task on the same thread, where from Swift's cooperative pool each
/// would take a thread of the pool and a hop to the loop. Jobs enqueued from the loop itself are
/// queued without waking it. The client's pushes prefer the loop of their connection on Linux,
/// the server's change streams the loop of theirs; the work they do between two I/Os must not
/// block, as the loop requires.
package final class EventLoopExecutor: TaskExecutor {
    /// The loop the jobs run on.
    package let loop: any EventLoop

    /// Creates an executor for `loop`.
    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
