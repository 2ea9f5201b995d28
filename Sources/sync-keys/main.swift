import SyncCLI

#if canImport(Glibc)
import Glibc

// One malloc arena for every thread of the tool: a rotation fills a page cache of up to the
// database's size on each of two threads, and in glibc's per-thread arenas each page of it grows
// the heap with a system call of its own (`mprotect`), where the main arena grows in large steps.
// `mallopt` is looked up by name (malloc.h is not part of the Glibc module); -8 is `M_ARENA_MAX`.
if let mallopt = dlsym(nil, "mallopt") {
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    _ = unsafeBitCast(mallopt, to: Mallopt.self)(-8, 1)
}
#endif

// tpm2-tss logs every failed TPM command to standard error; the tools report errors themselves.
// Set while the process has one thread, unless the user asked for the library's log.
setenv("TSS2_LOG", "all+NONE", 0)

// No `await` here: the process has one thread when CommandRunner moves the secrets out of the environment.
CommandRunner.main(SyncKeysTool.self, toolName: "sync-keys")
