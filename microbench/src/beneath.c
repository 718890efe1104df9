/*
 * beneath.c - path resolution confined to a directory (see beneath.h).
 */
#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int force_fallback;

void beneath_force_fallback(int on)
{
	force_fallback = on;
}

static int walk_open(int root, const char *path, int flags, mode_t mode);

int beneath_open(int root, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0, /* O_TMPFILE holds O_DIRECTORY's bit */
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (path[0] == '\0') {
		errno = ENOENT;
		return -1;
	}
	if (!force_fallback) {
		fd = syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return (int)fd;
	}
	return walk_open(root, path, flags, mode);
}

/*
 * The fallback: open each directory component with O_PATH | O_NOFOLLOW | O_DIRECTORY
 * from the previous one, refusing "..", absolute paths and symlinks anywhere (EXDEV for
 * the first two, ELOOP for the last, as openat2 reports them).
 */
static int walk_open(int root, const char *path, int flags, mode_t mode)
{
	char copy[PATH_MAX];
	char *name, *slash;
	int dir, next, fd, saved;

	if (path[0] == '/') {
		errno = EXDEV;
		return -1;
	}
	if (strlen(path) >= sizeof(copy)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(copy, path);
	dir = fcntl(root, F_DUPFD_CLOEXEC, 0);
	if (dir < 0)
		return -1;
	name = copy;
	while ((slash = strchr(name, '/')) != NULL) {
		*slash = '\0';
		if (strcmp(name, "..") == 0) {
			close(dir);
			errno = EXDEV;
			return -1;
		}
		if (name[0] != '\0' && strcmp(name, ".") != 0) {
			next = openat(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
			saved = errno;
			close(dir);
			if (next < 0) {
				errno = saved == ENOTDIR ? ELOOP : saved; /* a symlink, refused */
				return -1;
			}
			dir = next;
		}
		name = slash + 1;
	}
	if (strcmp(name, "..") == 0) {
		close(dir);
		errno = EXDEV;
		return -1;
	}
	fd = openat(dir, name[0] ? name : ".", flags | O_NOFOLLOW | O_CLOEXEC, mode);
	saved = errno;
	close(dir);
	errno = saved;
	return fd;
}

int beneath_parent(int root, const char *path, const char **base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len;

	*base = slash ? slash + 1 : path;
	if ((*base)[0] == '\0' || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0) {
		errno = (*base)[0] == '\0' ? ENOENT : EINVAL;
		return -1;
	}
	if (!slash)
		return beneath_open(root, ".", O_PATH | O_DIRECTORY, 0);
	len = (size_t)(slash - path);
	if (len >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, len);
	dir[len] = '\0';
	if (len == 0) { /* "/name": absolute, never beneath */
		errno = EXDEV;
		return -1;
	}
	return beneath_open(root, dir, O_PATH | O_DIRECTORY, 0);
}

int beneath_mkdirs(int root, const char *path, mode_t mode)
{
	char copy[PATH_MAX];
	char *name, *save = NULL;
	int dir = root, next, saved;

	if (strlen(path) >= sizeof(copy)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (path[0] == '/') {
		errno = EXDEV;
		return -1;
	}
	strcpy(copy, path);
	/* One component at a time from the directory made last: each step resolves a single
	 * name, so a path of d components costs d steps, not d * d / 2. */
	for (name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			errno = EXDEV;
			goto fail;
		}
		if (mkdirat(dir, name, mode) != 0 && errno != EEXIST)
			goto fail;
		next = beneath_open(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0);
		if (next < 0)
			goto fail;
		if (dir != root)
			close(dir);
		dir = next;
	}
	if (dir != root)
		close(dir);
	return 0;
fail:
	saved = errno;
	if (dir != root)
		close(dir);
	errno = saved;
	return -1;
}
