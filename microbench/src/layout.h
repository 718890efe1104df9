/*
 * layout.h - how a tree's files lie on disk (issue 5: aging), measured with FIEMAP, and
 * how fragmented the free space is, measured with GETFSMAP where the filesystem has it.
 *
 * Smith and Seltzer's layout score: of every file block after a file's first, the fraction
 * that sits right after the file's previous block on disk.  1.0 is perfectly contiguous.
 */
#ifndef FSBENCH_LAYOUT_H
#define FSBENCH_LAYOUT_H

#include <stdint.h>

struct json;

struct layout {
	int fiemap_supported;
	uint64_t files, blocks, extents, max_extents, contiguous, scored_blocks;
	int free_supported;
	uint64_t free_extents, free_bytes, largest_free, free_in_large; /* large: >= 1 MiB */
};

/* Measure every regular file beneath the directory `root` (descriptor). -1 on error. */
int layout_measure(int root, struct layout *out);

void layout_write_json(struct json *j, const char *key, const struct layout *l);

#endif
