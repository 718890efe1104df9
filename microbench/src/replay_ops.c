/*
 * replay_ops.c - each plan operation as the system calls the trace made, every path
 * resolved beneath the target (beneath.c).  A stat resolves its parent directory once
 * (cached) and then makes one fstatat, so replay costs what the traced call cost.
 */
#include "replay_ops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "beneath.h"
#include "mapped.h"
#include "util.h"

/*
 * Paths whose meaning an operation changed (rename, rmdir, unlink, mkdir, link, symlink),
 * numbered; each thread catches up by dropping the cached directories at or beneath them,
 * and only those, so a replay's own lookups stay few and do not disturb what it replays.
 * A thread that fell more than CHANGE_LOG changes behind drops everything.
 */
enum { CHANGE_LOG = 1024 };
static pthread_mutex_t change_lock = PTHREAD_MUTEX_INITIALIZER;
static char *changed[CHANGE_LOG];
static _Atomic uint64_t change_seq;

void replay_ctx_init(struct replay_ctx *c, int root, int *fds, uint64_t max_io)
{
	memset(c, 0, sizeof(*c));
	c->root = root;
	c->fds = fds;
	c->buf = xaligned(4096, max_io ? max_io : 4096);
	memset(c->buf, 'r', max_io ? max_io : 4096);
	for (int i = 0; i < DIR_CACHE_SLOTS; i++)
		c->cache.fd[i] = -1;
}

static void cache_clear(struct dir_cache *d)
{
	for (int i = 0; i < DIR_CACHE_SLOTS; i++) {
		if (d->fd[i] >= 0)
			close(d->fd[i]);
		free(d->name[i]);
		d->name[i] = NULL;
		d->fd[i] = -1;
	}
}

void replay_ctx_free(struct replay_ctx *c)
{
	for (int i = 0; i < DIR_CACHE_SLOTS; i++)
		free(c->cache.name[i]);
	free(c->buf);
}

static unsigned hash(const char *s, size_t n)
{
	unsigned h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h % DIR_CACHE_SLOTS;
}

static void cache_forget(struct dir_cache *d, const char *path)
{
	size_t len = strlen(path);

	for (int i = 0; i < DIR_CACHE_SLOTS; i++) {
		const char *name = d->name[i];
		if (name && strncmp(name, path, len) == 0 && (name[len] == '\0' || name[len] == '/')) {
			close(d->fd[i]);
			free(d->name[i]);
			d->name[i] = NULL;
			d->fd[i] = -1;
		}
	}
}

static void catch_up(struct dir_cache *d)
{
	if (d->generation == atomic_load_explicit(&change_seq, memory_order_acquire))
		return;
	pthread_mutex_lock(&change_lock);
	uint64_t now = atomic_load_explicit(&change_seq, memory_order_relaxed);
	if (now - d->generation > CHANGE_LOG)
		cache_clear(d);
	else
		for (uint64_t seq = d->generation; seq < now; seq++)
			cache_forget(d, changed[seq % CHANGE_LOG]);
	pthread_mutex_unlock(&change_lock);
	d->generation = now;
}

static void namespace_changed(const char *path)
{
	pthread_mutex_lock(&change_lock);
	uint64_t seq = atomic_load_explicit(&change_seq, memory_order_relaxed);
	free(changed[seq % CHANGE_LOG]);
	changed[seq % CHANGE_LOG] = xstrdup(path);
	atomic_store_explicit(&change_seq, seq + 1, memory_order_release);
	pthread_mutex_unlock(&change_lock);
}

/* The parent of `path` beneath root, from the cache unless a change since touched it.
 * The descriptor belongs to the cache: callers do not close it. */
static int parent_of(struct replay_ctx *c, const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	unsigned slot = hash(path, len);
	int fd;

	catch_up(&c->cache);
	*base = slash ? slash + 1 : path;
	if (c->cache.name[slot] && strlen(c->cache.name[slot]) == len && memcmp(c->cache.name[slot], path, len) == 0
	    && (*base)[0] && strcmp(*base, ".") && strcmp(*base, ".."))
		return c->cache.fd[slot];
	fd = beneath_parent(c->root, path, base);
	if (fd < 0)
		return -1;
	if (c->cache.fd[slot] >= 0)
		close(c->cache.fd[slot]);
	free(c->cache.name[slot]);
	c->cache.name[slot] = strndup(path, len);
	c->cache.fd[slot] = fd;
	return fd;
}

static int fd_of(struct replay_ctx *c, int32_t handle)
{
	if (handle < 0 || c->fds[handle] < 0) {
		errno = EBADF;
		return -1;
	}
	return c->fds[handle];
}

static int handle_fd(struct replay_ctx *c, const struct plan_op *op)
{
	return fd_of(c, op->handle);
}

/* stat follows a final symlink only beneath root: lstat first, and a symlink is opened
 * with openat2 (which refuses one pointing out) and then fstat'ed. */
static int do_stat(struct replay_ctx *c, const struct plan_op *op, int follow)
{
	struct stat st;
	const char *base;
	int dir = parent_of(c, op->path, &base), fd, rc;

	if (dir < 0 && errno != EINVAL)
		return -1;
	if (dir >= 0) {
		if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return -1;
		if (!follow || !S_ISLNK(st.st_mode))
			return 0;
	}
	/* A final symlink to follow, or a path ending in "." or "..": resolved whole. */
	fd = beneath_open(c->root, op->path, O_PATH | (follow ? 0 : O_NOFOLLOW), 0);
	if (fd < 0)
		return -1;
	rc = fstat(fd, &st);
	close(fd);
	return rc;
}

/*
 * open, as cheaply as the traced call: one openat of the base name from the cached parent,
 * with O_NOFOLLOW so a final symlink is never followed there.  A final symlink (ELOOP), or
 * a path ending in "." or "..", is opened whole with openat2 from root instead, which
 * follows a link only beneath root.  O_PATH would open the link itself: it goes to openat2.
 */
static int open_beneath(struct replay_ctx *c, const char *path, int flags, mode_t mode)
{
	const char *base;
	int dir, fd;

	if (!(flags & O_PATH)) {
		dir = parent_of(c, path, &base);
		if (dir < 0 && errno != EINVAL)
			return -1;
		if (dir >= 0) {
			fd = openat(dir, base, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			if (fd >= 0 || errno != ELOOP || (flags & O_NOFOLLOW))
				return fd;
		}
	}
	return beneath_open(c->root, path, flags, mode);
}

static int do_open(struct replay_ctx *c, const struct plan_op *op)
{
	int flags = c->skip_syncs ? op->flags & ~(O_SYNC | O_DSYNC) : op->flags;
	int fd = open_beneath(c, op->path, flags, op->mode ? op->mode : 0644);

	if (fd < 0)
		return -1;
	if (op->handle >= 0) {
		if (c->fds[op->handle] >= 0)
			close(c->fds[op->handle]);
		c->fds[op->handle] = fd;
	} else {
		close(fd);
	}
	return 0;
}

static int do_close(struct replay_ctx *c, const struct plan_op *op)
{
	int fd = handle_fd(c, op);

	if (fd < 0)
		return -1;
	c->fds[op->handle] = -1;
	return close(fd);
}

static int do_data(struct replay_ctx *c, const struct plan_op *op)
{
	int fd = handle_fd(c, op);
	ssize_t n;

	if (fd < 0)
		return -1;
	if (op->kind == OP_READ)
		n = op->offset >= 0 ? pread(fd, c->buf, op->size, op->offset) : read(fd, c->buf, op->size);
	else
		n = op->offset >= 0 ? pwrite(fd, c->buf, op->size, op->offset) : write(fd, c->buf, op->size);
	return n < 0 ? -1 : 0;
}

/*
 * An in-kernel copy, as the traced program made it: from the source's file position to
 * the destination's offset (or position), so the kernel clones where extents can be
 * shared and reads and writes elsewhere.  A short copy goes on; one that copies nothing
 * means the source ended, as it did for the call that found the end when traced.
 */
static int do_copy(struct replay_ctx *c, const struct plan_op *op)
{
	int out = handle_fd(c, op), in = fd_of(c, op->flags);
	off_t at = op->offset;
	uint64_t left = op->size;

	if (out < 0 || in < 0)
		return -1;
	while (left > 0) {
		ssize_t n = copy_file_range(in, NULL, out, op->offset >= 0 ? &at : NULL, left, 0);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		left -= (uint64_t)n;
	}
	return 0;
}

/*
 * A mapped region read through, as the traced program's page faults read it (the trace
 * shows only the mmap).  The region is cut at the end of the file, where a touch would
 * raise SIGBUS.
 */
static int do_mmap(struct replay_ctx *c, const struct plan_op *op)
{
	int fd = handle_fd(c, op);
	uint64_t offset = op->offset > 0 ? (uint64_t)op->offset : 0, end = offset + op->size;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	if (end > (uint64_t)st.st_size)
		end = (uint64_t)st.st_size;
	return end > offset ? read_mapped(fd, offset, end - offset) : 0;
}

static int do_getdents(int fd, char *buf, size_t size)
{
	long n = syscall(SYS_getdents64, fd, buf, size < 4096 ? 4096 : size);

	return n < 0 ? -1 : (int)(n > 0);
}

/* A whole directory listed, as an NFS READDIR or a traced readdir without an open. */
static int do_readdir(struct replay_ctx *c, const struct plan_op *op)
{
	int fd = open_beneath(c, op->path, O_RDONLY | O_DIRECTORY, 0), more, saved;

	if (fd < 0)
		return -1;
	while ((more = do_getdents(fd, c->buf, 32768 < op->size ? op->size : 32768)) > 0)
		;
	saved = errno;
	close(fd);
	errno = saved;
	return more < 0 ? -1 : 0;
}

/* Two-path operations: both parents resolved beneath root. */
static int do_two_paths(struct replay_ctx *c, const struct plan_op *op)
{
	const char *base1, *base2;
	int dir1, dir2, rc;

	if (op->kind == OP_SYMLINK) { /* path2 is the new name; path the text it holds */
		dir2 = parent_of(c, op->path2, &base2);
		return dir2 < 0 ? -1 : symlinkat(op->path, dir2, base2);
	}
	dir1 = beneath_parent(c->root, op->path, &base1);
	if (dir1 < 0)
		return -1;
	dir2 = parent_of(c, op->path2, &base2);
	if (dir2 < 0) {
		rc = -1;
	} else if (op->kind == OP_RENAME) {
		rc = renameat(dir1, base1, dir2, base2);
	} else {
		rc = linkat(dir1, base1, dir2, base2, 0);
	}
	int saved = errno;
	close(dir1);
	errno = saved;
	return rc;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; this libc's headers predate it */
#endif

/*
 * chmod and utimes as one call on (parent, base) that does not follow a final symlink
 * (fchmodat2 and utimensat with AT_SYMLINK_NOFOLLOW), so nothing outside root is touched.
 * A final symlink, or a kernel without fchmodat2, takes the long way: the file opened O_PATH
 * beneath root (following the link only beneath it) and changed through /proc/self/fd.
 */
static int do_attr(struct replay_ctx *c, const struct plan_op *op)
{
	const char *base;
	char proc[64];
	mode_t mode = op->mode ? op->mode : 0644;
	int dir = parent_of(c, op->path, &base), fd, rc, saved;

	if (dir >= 0) {
		rc = op->kind == OP_CHMOD ? (int)syscall(SYS_fchmodat2, dir, base, mode, AT_SYMLINK_NOFOLLOW)
					  : utimensat(dir, base, NULL, AT_SYMLINK_NOFOLLOW);
		if (rc == 0 || (errno != ENOSYS && errno != EOPNOTSUPP))
			return rc;
		if (op->kind != OP_CHMOD) /* utimensat set the symlink's own times: done */
			return rc;
	} else if (errno != EINVAL) {
		return -1;
	}
	fd = beneath_open(c->root, op->path, O_PATH, 0);
	if (fd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rc = op->kind == OP_CHMOD ? chmod(proc, mode) : utimensat(AT_FDCWD, proc, NULL, 0);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

static int do_truncate(struct replay_ctx *c, const struct plan_op *op)
{
	int fd = op->kind == OP_FTRUNCATE ? handle_fd(c, op) : open_beneath(c, op->path, O_WRONLY, 0);
	int rc, saved;

	if (fd < 0)
		return -1;
	rc = ftruncate(fd, (off_t)op->size);
	saved = errno;
	if (op->kind == OP_TRUNCATE)
		close(fd);
	errno = saved;
	return rc;
}

static int do_op(struct replay_ctx *c, const struct plan_op *op)
{
	const char *base;
	struct stat st;
	char link[256];
	int dir, fd, rc;

	switch ((enum op_kind)op->kind) {
	case OP_OPEN:
		return do_open(c, op);
	case OP_CLOSE:
		return do_close(c, op);
	case OP_READ:
	case OP_WRITE:
		return do_data(c, op);
	case OP_FSYNC:
	case OP_FDATASYNC:
		fd = handle_fd(c, op);
		if (fd < 0 || c->skip_syncs)
			return fd < 0 ? -1 : 0;
		return op->kind == OP_FSYNC ? fsync(fd) : fdatasync(fd);
	case OP_STAT:
	case OP_ACCESS:
		return do_stat(c, op, 1);
	case OP_LSTAT:
		return do_stat(c, op, 0);
	case OP_FSTAT:
		fd = handle_fd(c, op);
		return fd < 0 ? -1 : fstat(fd, &st);
	case OP_UNLINK:
	case OP_RMDIR:
		dir = parent_of(c, op->path, &base);
		if (dir < 0)
			return -1;
		rc = unlinkat(dir, base, op->kind == OP_RMDIR ? AT_REMOVEDIR : 0);
		namespace_changed(op->path);
		return rc;
	case OP_MKDIR: /* the name may have been a cached symlink */
		dir = parent_of(c, op->path, &base);
		rc = dir < 0 ? -1 : mkdirat(dir, base, op->mode ? op->mode : 0755);
		namespace_changed(op->path);
		return rc;
	case OP_RENAME:
	case OP_LINK:
	case OP_SYMLINK:
		rc = do_two_paths(c, op);
		if (op->kind == OP_RENAME)
			namespace_changed(op->path);
		namespace_changed(op->path2);
		return rc;
	case OP_READLINK:
		dir = parent_of(c, op->path, &base);
		return dir < 0 ? -1 : (readlinkat(dir, base, link, sizeof(link)) < 0 ? -1 : 0);
	case OP_READDIR:
		return do_readdir(c, op);
	case OP_GETDENTS:
		fd = handle_fd(c, op);
		return fd < 0 ? -1 : (do_getdents(fd, c->buf, op->size) < 0 ? -1 : 0);
	case OP_TRUNCATE:
	case OP_FTRUNCATE:
		return do_truncate(c, op);
	case OP_CHMOD:
	case OP_UTIMES:
		return do_attr(c, op);
	case OP_MMAP:
		return do_mmap(c, op);
	case OP_COPY:
		return do_copy(c, op);
	case OP_KINDS:
		break;
	}
	errno = EINVAL;
	return -1;
}

int replay_op(struct replay_ctx *c, const struct plan_op *op)
{
	errno = 0;
	return do_op(c, op) == 0 ? 0 : (errno ? errno : EIO);
}
