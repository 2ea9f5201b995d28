#pragma once
// epoll for sync-bench's stream reader (Glibc's Swift module leaves sys/epoll.h out).
#include <sys/epoll.h>
