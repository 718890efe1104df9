/*
 * beneath.h - every path a replay or an ager touches stays beneath one directory.
 *
 * openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS resolves a relative path from
 * the root directory's descriptor and refuses, in the kernel, anything that would leave
 * it: "..", absolute paths, and symlinks pointing out, even ones planted mid-run.  Where
 * openat2 is missing (ENOSYS, before Linux 5.6) a component-by-component openat walk with
 * O_NOFOLLOW that refuses ".." and symlinks does the same, more strictly.  A string check
 * alone is never trusted.
 */
#ifndef FSBENCH_BENEATH_H
#define FSBENCH_BENEATH_H

#include <sys/types.h>

/* Open `path` beneath the directory `root` (flags and mode as for openat).  -1 and errno
 * on failure; EXDEV when the path would leave root. */
int beneath_open(int root, const char *path, int flags, mode_t mode);

/*
 * The parent directory of `path` beneath root, opened O_PATH, and in *base the last
 * component (a pointer into path).  The *at() calls then act on (dirfd, base) with a base
 * that holds no '/', and is neither "." nor ".." (EINVAL otherwise).  The caller closes it.
 */
int beneath_parent(int root, const char *path, const char **base);

/* mkdir -p beneath root: every missing directory of `path` (path itself included). */
int beneath_mkdirs(int root, const char *path, mode_t mode);

/* Use the openat walk even where openat2 exists (tests of the fallback). */
void beneath_force_fallback(int on);

#endif
