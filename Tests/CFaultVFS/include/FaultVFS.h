#ifndef CIPHERSYNC_FAULT_VFS_H
#define CIPHERSYNC_FAULT_VFS_H

// A test-only SQLite VFS that wraps the default one ("unix") and becomes the default, so that a
// test can put faults under the store without changing it. It is transparent for every file
// outside the directories a test watches. For a file under a watched directory it can
//   - make every sync (`xSync`, SQLite's fsync/fdatasync) fail with SQLITE_IOERR_FSYNC, and
//   - simulate a power cut: every file is put back to the content it had at its last successful
//     sync (or when it was first opened), and the connections that had it open lose every later
//     write, truncation and deletion, as a machine that lost power would.
// Safe to use from several threads and tests at once (one mutex); each test watches its own
// temporary directory.

/// Registers the VFS as SQLite's default (once; later calls do nothing). Returns an SQLite code.
int fault_vfs_register(void);

/// Starts watching the files under `directory` (a path prefix ending in '/').
void fault_vfs_watch(const char *directory);

/// Makes the syncs of files under `directory` fail (nonzero) or work again (0).
void fault_vfs_fail_syncs(const char *directory, int fail);

/// The successful syncs of files under `directory` since it was watched.
long fault_vfs_sync_count(const char *directory);

/// Simulates a power cut for the files under `directory`. Returns how many files were put back,
/// or -1 when one could not be.
int fault_vfs_power_cut(const char *directory);

/// Stops watching `directory` and forgets its files (call once the connections cut off by a power
/// cut are closed).
void fault_vfs_unwatch(const char *directory);

#endif
