// See include/FaultVFS.h. Test support only: never linked into a product.
#include "FaultVFS.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlcipher/sqlite3.h>

typedef struct Watch {
    char *prefix;
    int failSyncs;
    long syncs;
    struct Watch *next;
} Watch;

struct FaultFile;

// One file under a watched directory: its content at its last sync, and its open handles.
typedef struct Tracker {
    char *path;
    Watch *watch;
    unsigned char *synced;
    sqlite3_int64 syncedSize;
    int cut;  // a power cut happened: deletions of the path are dropped
    struct FaultFile *handles;
    struct Tracker *next;
} Tracker;

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real;
    Tracker *tracker;
    int dead;  // cut off by a power cut
    struct FaultFile *nextHandle;
} FaultFile;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Watch *watches;
static Tracker *trackers;
static sqlite3_vfs *realVFS;
static sqlite3_vfs faultVFS;
static sqlite3_io_methods faultMethods;

static Watch *watchFor(const char *path) {
    for (Watch *w = watches; w; w = w->next) {
        if (strncmp(path, w->prefix, strlen(w->prefix)) == 0) return w;
    }
    return NULL;
}

static Watch *watchNamed(const char *prefix) {
    for (Watch *w = watches; w; w = w->next) {
        if (strcmp(w->prefix, prefix) == 0) return w;
    }
    return NULL;
}

// Reads the whole file at `path` (NULL and size 0 when absent or empty).
static void readWhole(const char *path, unsigned char **bytes, sqlite3_int64 *size) {
    *bytes = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    off_t end = lseek(fd, 0, SEEK_END);
    if (end > 0) {
        unsigned char *buffer = malloc((size_t)end);
        ssize_t done = 0;
        while (buffer && done < end) {
            ssize_t n = pread(fd, buffer + done, (size_t)(end - done), done);
            if (n <= 0) break;
            done += n;
        }
        *bytes = buffer;
        *size = done;
    }
    close(fd);
}

static Tracker *trackerFor(const char *path, Watch *watch) {
    for (Tracker *t = trackers; t; t = t->next) {
        if (strcmp(t->path, path) == 0) return t;
    }
    Tracker *t = calloc(1, sizeof(Tracker));
    if (!t) return NULL;
    t->path = strdup(path);
    t->watch = watch;
    readWhole(path, &t->synced, &t->syncedSize);
    t->next = trackers;
    trackers = t;
    return t;
}

static void unlinkHandle(FaultFile *file) {
    Tracker *t = file->tracker;
    if (!t) return;
    for (FaultFile **h = &t->handles; *h; h = &(*h)->nextHandle) {
        if (*h == file) {
            *h = file->nextHandle;
            break;
        }
    }
    file->tracker = NULL;
}

static int isDead(FaultFile *file) {
    pthread_mutex_lock(&lock);
    int dead = file->dead;
    pthread_mutex_unlock(&lock);
    return dead;
}

// MARK: file methods

static int faultClose(sqlite3_file *f) {
    FaultFile *file = (FaultFile *)f;
    pthread_mutex_lock(&lock);
    unlinkHandle(file);
    pthread_mutex_unlock(&lock);
    return file->real->pMethods->xClose(file->real);
}

static int faultRead(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *file = (FaultFile *)f;
    if (isDead(file)) return SQLITE_IOERR_READ;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int faultWrite(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *file = (FaultFile *)f;
    if (isDead(file)) return SQLITE_OK;
    return file->real->pMethods->xWrite(file->real, buffer, amount, offset);
}

static int faultTruncate(sqlite3_file *f, sqlite3_int64 size) {
    FaultFile *file = (FaultFile *)f;
    if (isDead(file)) return SQLITE_OK;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int faultSync(sqlite3_file *f, int flags) {
    FaultFile *file = (FaultFile *)f;
    pthread_mutex_lock(&lock);
    int dead = file->dead;
    int fail = file->tracker && file->tracker->watch->failSyncs;
    pthread_mutex_unlock(&lock);
    if (dead) return SQLITE_OK;
    if (fail) return SQLITE_IOERR_FSYNC;
    int rc = file->real->pMethods->xSync(file->real, flags);
    if (rc != SQLITE_OK) return rc;
    pthread_mutex_lock(&lock);
    Tracker *t = file->tracker;
    if (t) {
        free(t->synced);
        readWhole(t->path, &t->synced, &t->syncedSize);
        t->watch->syncs += 1;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int faultFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int faultLock(sqlite3_file *f, int level) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xLock(file->real, level);
}

static int faultUnlock(sqlite3_file *f, int level) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int faultCheckReservedLock(sqlite3_file *f, int *out) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xCheckReservedLock(file->real, out);
}

static int faultFileControl(sqlite3_file *f, int op, void *arg) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xFileControl(file->real, op, arg);
}

static int faultSectorSize(sqlite3_file *f) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xSectorSize(file->real);
}

static int faultDeviceCharacteristics(sqlite3_file *f) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int faultShmMap(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xShmMap(file->real, page, size, extend, out);
}

static int faultShmLock(sqlite3_file *f, int offset, int n, int flags) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xShmLock(file->real, offset, n, flags);
}

static void faultShmBarrier(sqlite3_file *f) {
    FaultFile *file = (FaultFile *)f;
    file->real->pMethods->xShmBarrier(file->real);
}

static int faultShmUnmap(sqlite3_file *f, int deleteFlag) {
    FaultFile *file = (FaultFile *)f;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

// MARK: VFS methods

static int faultOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    FaultFile *file = (FaultFile *)f;
    memset(file, 0, sizeof(FaultFile));
    file->real = (sqlite3_file *)&file[1];
    int rc = realVFS->xOpen(realVFS, name, file->real, flags, outFlags);
    if (rc != SQLITE_OK || !file->real->pMethods) {
        file->base.pMethods = NULL;
        return rc;
    }
    file->base.pMethods = &faultMethods;
    if (name) {
        pthread_mutex_lock(&lock);
        Watch *watch = watchFor(name);
        if (watch) {
            file->tracker = trackerFor(name, watch);
            if (file->tracker) {
                file->nextHandle = file->tracker->handles;
                file->tracker->handles = file;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

static int faultDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    pthread_mutex_lock(&lock);
    for (Tracker *t = trackers; t; t = t->next) {
        if (strcmp(t->path, name) == 0) {
            if (t->cut) {
                pthread_mutex_unlock(&lock);
                return SQLITE_OK;
            }
            // Deleted for good: nothing of it to put back at a power cut.
            free(t->synced);
            t->synced = NULL;
            t->syncedSize = -1;
        }
    }
    pthread_mutex_unlock(&lock);
    return realVFS->xDelete(realVFS, name, syncDirectory);
}

static int faultAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return realVFS->xAccess(realVFS, name, flags, out);
}

static int faultFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, out);
}

static void *faultDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return realVFS->xDlOpen(realVFS, name);
}

static void faultDlError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    realVFS->xDlError(realVFS, size, out);
}

static void (*faultDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return realVFS->xDlSym(realVFS, handle, symbol);
}

static void faultDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    realVFS->xDlClose(realVFS, handle);
}

static int faultRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xRandomness(realVFS, size, out);
}

static int faultSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return realVFS->xSleep(realVFS, microseconds);
}

static int faultCurrentTime(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return realVFS->xCurrentTime(realVFS, out);
}

static int faultGetLastError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xGetLastError ? realVFS->xGetLastError(realVFS, size, out) : 0;
}

static int faultCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return realVFS->xCurrentTimeInt64(realVFS, out);
}

// MARK: control

int fault_vfs_register(void) {
    pthread_mutex_lock(&lock);
    if (realVFS) {
        pthread_mutex_unlock(&lock);
        return SQLITE_OK;
    }
    sqlite3_initialize();
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (!base || base->iVersion < 2) {
        pthread_mutex_unlock(&lock);
        return SQLITE_ERROR;
    }
    realVFS = base;
    faultMethods = (sqlite3_io_methods){
        .iVersion = 2,
        .xClose = faultClose,
        .xRead = faultRead,
        .xWrite = faultWrite,
        .xTruncate = faultTruncate,
        .xSync = faultSync,
        .xFileSize = faultFileSize,
        .xLock = faultLock,
        .xUnlock = faultUnlock,
        .xCheckReservedLock = faultCheckReservedLock,
        .xFileControl = faultFileControl,
        .xSectorSize = faultSectorSize,
        .xDeviceCharacteristics = faultDeviceCharacteristics,
        .xShmMap = faultShmMap,
        .xShmLock = faultShmLock,
        .xShmBarrier = faultShmBarrier,
        .xShmUnmap = faultShmUnmap,
    };
    faultVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(FaultFile) + base->szOsFile,
        .mxPathname = base->mxPathname,
        .zName = "ciphersync-fault",
        .xOpen = faultOpen,
        .xDelete = faultDelete,
        .xAccess = faultAccess,
        .xFullPathname = faultFullPathname,
        .xDlOpen = faultDlOpen,
        .xDlError = faultDlError,
        .xDlSym = faultDlSym,
        .xDlClose = faultDlClose,
        .xRandomness = faultRandomness,
        .xSleep = faultSleep,
        .xCurrentTime = faultCurrentTime,
        .xGetLastError = faultGetLastError,
        .xCurrentTimeInt64 = faultCurrentTimeInt64,
    };
    int rc = sqlite3_vfs_register(&faultVFS, 1);
    pthread_mutex_unlock(&lock);
    return rc;
}

void fault_vfs_watch(const char *directory) {
    pthread_mutex_lock(&lock);
    if (!watchNamed(directory)) {
        Watch *w = calloc(1, sizeof(Watch));
        if (w) {
            w->prefix = strdup(directory);
            w->next = watches;
            watches = w;
        }
    }
    pthread_mutex_unlock(&lock);
}

void fault_vfs_fail_syncs(const char *directory, int fail) {
    pthread_mutex_lock(&lock);
    Watch *w = watchNamed(directory);
    if (w) w->failSyncs = fail;
    pthread_mutex_unlock(&lock);
}

long fault_vfs_sync_count(const char *directory) {
    pthread_mutex_lock(&lock);
    Watch *w = watchNamed(directory);
    long count = w ? w->syncs : 0;
    pthread_mutex_unlock(&lock);
    return count;
}

int fault_vfs_power_cut(const char *directory) {
    pthread_mutex_lock(&lock);
    Watch *w = watchNamed(directory);
    int restored = 0;
    for (Tracker *t = trackers; t && w; t = t->next) {
        if (t->watch != w) continue;
        t->cut = 1;
        for (FaultFile *h = t->handles; h; h = h->nextHandle) h->dead = 1;
        if (t->syncedSize < 0) continue;
        int fd = open(t->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            restored = -1;
            break;
        }
        sqlite3_int64 done = 0;
        while (done < t->syncedSize) {
            ssize_t n = pwrite(fd, t->synced + done, (size_t)(t->syncedSize - done), done);
            if (n <= 0) break;
            done += n;
        }
        int ok = done == t->syncedSize && ftruncate(fd, t->syncedSize) == 0;
        close(fd);
        if (!ok) {
            restored = -1;
            break;
        }
        restored += 1;
    }
    pthread_mutex_unlock(&lock);
    return restored;
}

void fault_vfs_unwatch(const char *directory) {
    pthread_mutex_lock(&lock);
    Watch *w = watchNamed(directory);
    if (w) {
        for (Tracker **t = &trackers; *t;) {
            Tracker *tracker = *t;
            if (tracker->watch != w) {
                t = &tracker->next;
                continue;
            }
            for (FaultFile *h = tracker->handles; h; h = h->nextHandle) h->tracker = NULL;
            *t = tracker->next;
            free(tracker->synced);
            free(tracker->path);
            free(tracker);
        }
        for (Watch **p = &watches; *p; p = &(*p)->next) {
            if (*p == w) {
                *p = w->next;
                break;
            }
        }
        free(w->prefix);
        free(w);
    }
    pthread_mutex_unlock(&lock);
}
