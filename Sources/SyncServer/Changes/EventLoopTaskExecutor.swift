import NIOCore

/// Runs the jobs of the tasks that prefer it (`withTaskExecutorPreference`) on one NIO event
/// loop. A change stream runs on its connection's loop: a keep-alive or an event it writes goes
/// straight to the socket (NIO writes at once from the channel's own loop), where from Swift's
/// cooperative pool each write would take a thread of the pool the requests run on and then a
/// hop to the loop. The stream's work between two writes is short and never blocks (a look at
/// the hub's state), as the loop requires.
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
