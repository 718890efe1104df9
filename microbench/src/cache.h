/*
 * cache.h - put a file or the whole system into a declared cache state before timing
 * (DESIGN: cold, warm or O_DIRECT, declared and recorded for every measurement).
 */
#ifndef FSBENCH_CACHE_H
#define FSBENCH_CACHE_H

#include <stdint.h>

enum cache_mode { CACHE_COLD = 1, CACHE_WARM = 2, CACHE_DIRECT = 4 };

const char *cache_mode_name(enum cache_mode mode);

/* sync(), then drop page cache, dentries and inodes (Tang App. D's goal, done by the
 * kernel).  Needs root; -1 (reported) otherwise. */
int cache_drop_all(void);
/* Write back and evict one file's pages: fsync + posix_fadvise(DONTNEED). */
int cache_evict_file(int fd, const char *path);
/* Read a file through once so its pages are cached. */
int cache_warm_file(int fd, const char *path, uint64_t size);
/* 1 if this process may write /proc/sys/vm/drop_caches. */
int cache_can_drop_all(void);

#endif
