// A test-only LD_PRELOAD library that makes some system calls fail with EIO, for the files whose
// path contains a given text (the tests build it with the system C compiler; never shipped):
//   CIPHERSYNC_TEST_FSYNC_EIO=<text>  fsync and fdatasync of such a file fail with EIO;
//   CIPHERSYNC_TEST_WRITE_EIO=<text>  write and pwrite to such a file fail with EIO.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

// Whether the file open on `fd` has a path containing the text of the variable `name`.
static int matches(int fd, const char *name) {
    const char *text = getenv(name);
    if (!text || !*text) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strstr(path, text) != NULL;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    if (matches(fd, "CIPHERSYNC_TEST_FSYNC_EIO")) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    if (matches(fd, "CIPHERSYNC_TEST_FSYNC_EIO")) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}

ssize_t write(int fd, const void *buffer, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (matches(fd, "CIPHERSYNC_TEST_WRITE_EIO")) {
        errno = EIO;
        return -1;
    }
    return real(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (matches(fd, "CIPHERSYNC_TEST_WRITE_EIO")) {
        errno = EIO;
        return -1;
    }
    return real(fd, buffer, count, offset);
}
