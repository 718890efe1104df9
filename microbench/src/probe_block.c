/*
 * probe_block.c - the filesystem block size, two ways.
 *
 * Shenoy 2.2: with readahead off (POSIX_FADV_RANDOM) and a cold file, read `quantum`-byte
 * chunks from an offset aligned to the LCM of the possible block sizes; a chunk that needs
 * a new unit from the disk is slow, so the spikes are one transfer unit apart.  On Linux the
 * page cache moves whole pages, so for any block size up to the page size the spikes are a
 * page apart: the probe reports that spacing as the transfer unit.
 *
 * The block size itself shows in allocation: a file holding one byte far out (a hole before
 * it) has one block allocated, and SEEK_HOLE from that byte ends where that block ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "probe.h"
#include "util.h"

enum { LCM_OFFSET = 64 << 10, QUANTUM = 512, SPAN = 64 << 10 };

/* Allocation granularity: one byte written at LCM_OFFSET + 1 of an empty file, synced;
 * the hole after it starts at the end of the block that byte landed in. */
static int64_t allocation_unit(int dir)
{
	const char *name = "fsbm-probe-alloc";
	int fd = openat(dir, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int64_t unit = -1;
	struct stat st;

	if (fd < 0)
		return fail_errno("create", name);
	if (pwrite(fd, "x", 1, LCM_OFFSET + 1) == 1 && ftruncate(fd, 4 * LCM_OFFSET) == 0 && fsync(fd) == 0) {
		off_t hole = lseek(fd, LCM_OFFSET + 1, SEEK_HOLE);
		if (hole > LCM_OFFSET && fstat(fd, &st) == 0 && st.st_blocks > 0)
			unit = (int64_t)hole - LCM_OFFSET;
	}
	close(fd);
	unlinkat(dir, name, 0);
	return unit;
}

/* One pass over the cold span: the gaps between slow chunks, tallied by power of two. */
static int spike_pass(int fd, int64_t *counts, uint64_t *spikes)
{
	size_t n = SPAN / QUANTUM;
	uint64_t ns[SPAN / QUANTUM], sorted[SPAN / QUANTUM], threshold;
	char buf[QUANTUM];
	int64_t last = -1;

	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t t = now_ns();
		if (pread(fd, buf, QUANTUM, LCM_OFFSET + (off_t)(i * QUANTUM)) != QUANTUM)
			return -1;
		ns[i] = now_ns() - t;
	}
	/* A hit costs about the same every time; a miss goes to the disk: far above the median. */
	memcpy(sorted, ns, sizeof(ns));
	threshold = 4 * median_u64(sorted, n);
	for (size_t i = 0; i < n; i++) {
		if (ns[i] <= threshold)
			continue;
		(*spikes)++;
		if (last >= 0)
			for (int k = 0; k < 16; k++)
				if (((int64_t)i - last) * QUANTUM == (int64_t)QUANTUM << k)
					counts[k]++;
		last = (int64_t)i;
	}
	return 0;
}

/* Spike spacing: the most common distance between slow chunks, over several passes (a
 * chunk slowed by something else adds a stray gap; it does not win the vote). */
static int64_t spike_spacing(const struct probe_ctx *c, uint64_t *spikes)
{
	const char *name = "fsbm-probe-block";
	int64_t counts[16] = { 0 }, spacing = -1, best = 0;
	int fd, rc = 0;

	if (probe_cold_file(c, name, LCM_OFFSET + 2 * SPAN) != 0)
		return -1;
	fd = openat(c->dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) != 0)
		return fail_errno("open", name);
	*spikes = 0;
	for (int pass = 0; pass < (c->quick ? 3 : 9) && rc == 0; pass++)
		rc = spike_pass(fd, counts, spikes);
	close(fd);
	unlinkat(c->dir, name, 0);
	if (rc != 0)
		return fail_errno("read", name);
	for (int k = 0; k < 16; k++)
		if (counts[k] > best) {
			best = counts[k];
			spacing = (int64_t)QUANTUM << k;
		}
	return spacing;
}

int probe_block_size(const struct probe_ctx *c, struct json *j)
{
	uint64_t start = now_ns(), spikes = 0;
	int64_t unit = allocation_unit(c->dir);
	int64_t spacing = spike_spacing(c, &spikes);

	if (unit < 0 && spacing < 0)
		return -1;
	json_key(j, "block_size_bytes");
	if (unit > 0)
		json_i64(j, unit);
	else
		json_null(j);
	json_kv_string(j, "block_size_method", "allocation granularity: SEEK_HOLE after one byte past a hole");
	json_key(j, "transfer_unit_bytes");
	if (spacing > 0)
		json_i64(j, spacing);
	else
		json_null(j);
	json_kv_u64(j, "spikes", spikes);
	json_kv_string(j, "transfer_unit_method", "Shenoy 2.2: spacing of slow 512-byte reads, readahead off, cold; "
						    "on Linux the page cache moves whole pages");
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
}
