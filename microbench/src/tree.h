/*
 * tree.h - Tang's hierarchies (thesis App. C): n entries with at most 100 per directory,
 * all at the lowest level, ceil(log100 n) levels deep, so no directory grows so large
 * that lookup inside it dominates what a benchmark measures.
 */
#ifndef FSBENCH_TREE_H
#define FSBENCH_TREE_H

#include <stddef.h>

enum { TREE_FANOUT = 100, TREE_PATH_MAX = 256 };

struct tree {
	size_t n;       /* leaves */
	int levels;     /* path components of a leaf, >= 1 */
};

void tree_init(struct tree *t, size_t n);
/* Path of leaf i relative to the tree's root, with `prefix` before the leaf's own name
 * ("f" for files, "d" for directories); e.g. "i03/f42". */
void tree_leaf_path(const struct tree *t, size_t i, const char *prefix, char *buf, size_t len);
/* Make every interior directory of the tree beneath dirfd; -1 (reported) on failure. */
int tree_make_dirs(const struct tree *t, int dirfd);
/* Remove `name` beneath dirfd and everything below it, never following a symlink. */
int remove_tree_at(int dirfd, const char *name);

#endif
