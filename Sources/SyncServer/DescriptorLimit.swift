#if canImport(Glibc)
import Glibc

/// Each open connection — a change stream is one that stays open — holds a file descriptor, and
/// the soft limit many systems start a process with (1,024) would refuse connections long before
/// the machine runs out of anything. At start the server raises its soft limit to the hard limit
/// the system allows it (`ulimit -Hn`; raise that one in the service's unit, `LimitNOFILE=`).
public enum DescriptorLimit {
    /// Raises the soft limit of open descriptors to the hard limit.
    /// - Returns: The soft limit now, or `nil` when it cannot be read.
    @discardableResult
    public static func raise() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(limit.rlim_cur)
    }
}
#endif
