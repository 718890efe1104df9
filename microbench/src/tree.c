/*
 * tree.c - build and name the entries of a Tang App. C hierarchy.
 */
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/stat.h>

#include "util.h"

void tree_init(struct tree *t, size_t n)
{
	size_t capacity = TREE_FANOUT;

	t->n = n;
	t->levels = 1;
	while (capacity < n) {
		capacity *= TREE_FANOUT;
		t->levels++;
	}
}

/* Interior components are the base-100 digits of i, most significant first: "i07/i03". */
static size_t interior_path(const struct tree *t, size_t i, int depth, char *buf, size_t len)
{
	size_t used = 0;

	for (int level = 0; level < depth; level++) {
		size_t digit = i;

		for (int k = level; k < t->levels - 1; k++)
			digit /= TREE_FANOUT;
		digit %= TREE_FANOUT;
		used += (size_t)snprintf(buf + used, len - used, "i%02zu/", digit);
		if (used >= len)
			return len - 1;
	}
	buf[used] = '\0';
	return used;
}

void tree_leaf_path(const struct tree *t, size_t i, const char *prefix, char *buf, size_t len)
{
	size_t used = interior_path(t, i, t->levels - 1, buf, len);

	snprintf(buf + used, len - used, "%s%02zu", prefix, i % TREE_FANOUT);
}

int tree_make_dirs(const struct tree *t, int dirfd)
{
	char path[TREE_PATH_MAX];

	/* Every interior directory is the parent path of some leaf; leaf i = k*100 covers each. */
	for (size_t i = 0; i < t->n; i += TREE_FANOUT) {
		for (int depth = 1; depth < t->levels; depth++) {
			interior_path(t, i, depth, path, sizeof(path));
			if (mkdirat(dirfd, path, 0755) != 0 && errno != EEXIST)
				return fail_errno("mkdirat", path);
		}
	}
	return 0;
}

int remove_tree_at(int dirfd, const char *name)
{
	struct stat st;
	int fd, rc = 0;
	DIR *dir;
	struct dirent *de;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : fail_errno("fstatat", name);
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) == 0 ? 0 : fail_errno("unlinkat", name);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail_errno("openat", name);
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return fail_errno("fdopendir", name);
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (remove_tree_at(fd, de->d_name) != 0)
			rc = -1;
	}
	closedir(dir);
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) != 0)
		rc = fail_errno("rmdir", name);
	return rc;
}
