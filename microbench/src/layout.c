/*
 * layout.c - file layout (FIEMAP) and free-space fragmentation (GETFSMAP); see layout.h.
 */
#include "layout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fsmap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "util.h"

enum { EXTENTS_PER_CALL = 512, FSMAP_RECORDS = 512, LARGE_FREE = 1 << 20, MAX_DEPTH = 64 };

/* One file: its extents in logical order; blocks that follow their predecessor on disk. */
static int measure_file(int fd, struct layout *l, uint64_t block)
{
	size_t size = sizeof(struct fiemap) + EXTENTS_PER_CALL * sizeof(struct fiemap_extent);
	struct fiemap *map = xcalloc(1, size);
	uint64_t start = 0, blocks = 0, extents = 0, breaks = 0, prev_end = 0;
	int first = 1, last = 0;

	while (!last) {
		memset(map, 0, size);
		map->fm_start = start;
		map->fm_length = FIEMAP_MAX_OFFSET - start;
		map->fm_flags = FIEMAP_FLAG_SYNC; /* delayed allocation decided first */
		map->fm_extent_count = EXTENTS_PER_CALL;
		if (ioctl(fd, FS_IOC_FIEMAP, map) != 0) {
			free(map);
			return -1;
		}
		if (map->fm_mapped_extents == 0)
			break;
		for (uint32_t i = 0; i < map->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &map->fm_extents[i];
			uint64_t n = (e->fe_length + block - 1) / block;

			if (!first && e->fe_physical != prev_end)
				breaks++;
			first = 0;
			prev_end = e->fe_physical + e->fe_length;
			blocks += n;
			extents++;
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
		}
	}
	free(map);
	l->files++;
	l->blocks += blocks;
	l->extents += extents;
	if (extents > l->max_extents)
		l->max_extents = extents;
	if (blocks > 1) {
		l->scored_blocks += blocks - 1;
		l->contiguous += blocks - 1 - breaks;
	}
	return 0;
}

static int walk(int dir, struct layout *l, uint64_t block, int depth)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return 0;
	d = fdopendir(dir);
	if (!d) {
		close(dir);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "lost+found"))
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct stat st;

		if (fd < 0)
			continue; /* a symlink, a socket: not a file of the tree */
		if (fstat(fd, &st) != 0) {
			close(fd);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = walk(fd, l, block, depth + 1);
			continue;
		}
		if (S_ISREG(st.st_mode) && measure_file(fd, l, block) != 0) {
			if (errno == EOPNOTSUPP || errno == ENOTTY)
				l->fiemap_supported = 0;
			else
				rc = -1;
		}
		close(fd);
	}
	closedir(d);
	return rc;
}

/* Free extents from GETFSMAP (ext4, xfs); btrfs and tmpfs have no such map. */
static void measure_free(int fd, struct layout *l)
{
	size_t size = sizeof(struct fsmap_head) + FSMAP_RECORDS * sizeof(struct fsmap);
	struct fsmap_head *head = xcalloc(1, size);

	head->fmh_keys[1].fmr_device = UINT32_MAX;
	head->fmh_keys[1].fmr_physical = UINT64_MAX;
	head->fmh_keys[1].fmr_owner = UINT64_MAX;
	head->fmh_keys[1].fmr_offset = UINT64_MAX;
	head->fmh_keys[1].fmr_flags = UINT32_MAX;
	l->free_supported = 1;
	for (;;) {
		head->fmh_count = FSMAP_RECORDS;
		if (ioctl(fd, FS_IOC_GETFSMAP, head) != 0) {
			l->free_supported = 0;
			break;
		}
		if (head->fmh_entries == 0)
			break;
		for (uint32_t i = 0; i < head->fmh_entries; i++) {
			const struct fsmap *r = &head->fmh_recs[i];
			if (r->fmr_owner != FMR_OWN_FREE)
				continue;
			l->free_extents++;
			l->free_bytes += r->fmr_length;
			if (r->fmr_length > l->largest_free)
				l->largest_free = r->fmr_length;
			if (r->fmr_length >= LARGE_FREE)
				l->free_in_large += r->fmr_length;
		}
		if (head->fmh_recs[head->fmh_entries - 1].fmr_flags & FMR_OF_LAST)
			break;
		fsmap_advance(head);
	}
	free(head);
}

int layout_measure(int root, struct layout *out)
{
	struct stat st;
	int dir;

	memset(out, 0, sizeof(*out));
	out->fiemap_supported = 1;
	if (fstat(root, &st) != 0)
		return fail_errno("fstat", "the target");
	dir = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return fail_errno("open", "the target");
	if (syncfs(dir) != 0) { /* delayed allocation decided, so free space is what it will be */
		close(dir);
		return fail_errno("syncfs", "the target");
	}
	measure_free(dir, out);
	return walk(dir, out, (uint64_t)st.st_blksize, 0);
}

void layout_write_json(struct json *j, const char *key, const struct layout *l)
{
	json_key(j, key);
	json_begin_object(j);
	json_kv_bool(j, "fiemap_supported", l->fiemap_supported);
	json_kv_u64(j, "files", l->files);
	json_kv_u64(j, "blocks", l->blocks);
	json_kv_u64(j, "extents", l->extents);
	json_kv_double(j, "extents_per_file_mean", l->files ? (double)l->extents / (double)l->files : 0);
	json_kv_u64(j, "extents_per_file_max", l->max_extents);
	json_key(j, "layout_score");
	if (l->fiemap_supported && l->scored_blocks)
		json_double(j, (double)l->contiguous / (double)l->scored_blocks);
	else
		json_null(j);
	json_key(j, "free_space");
	json_begin_object(j);
	json_kv_bool(j, "supported", l->free_supported);
	if (l->free_supported) {
		json_kv_u64(j, "extents", l->free_extents);
		json_kv_u64(j, "bytes", l->free_bytes);
		json_kv_double(j, "mean_extent_bytes", l->free_extents ? (double)l->free_bytes / (double)l->free_extents : 0);
		json_kv_u64(j, "largest_extent_bytes", l->largest_free);
		json_kv_double(j, "fraction_in_extents_of_1MiB_or_more",
			       l->free_bytes ? (double)l->free_in_large / (double)l->free_bytes : 0);
	}
	json_end_object(j);
	json_end_object(j);
}
