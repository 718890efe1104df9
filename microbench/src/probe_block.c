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

/* A chunk's alignment class: how many times 2 divides its index in the span (the first
 * chunk, aligned to the whole span, gets the top class).  A transfer unit of QUANTUM << k
 * makes every chunk of class k or more a miss and every chunk below it a hit. */
enum { CHUNKS = SPAN / QUANTUM, CLASSES = 8, PASSES_MAX = 9 };

static int alignment_class(size_t i)
{
	int k = 0;

	if (i == 0)
		return CLASSES - 1;
	while (k < CLASSES - 1 && i % 2 == 0) {
		i /= 2;
		k++;
	}
	return k;
}

/* One pass over the cold span: each chunk's read time, filed under its alignment class. */
static int spike_pass(int fd, uint64_t by_class[CLASSES][CHUNKS * PASSES_MAX], size_t *filled)
{
	char buf[QUANTUM];

	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		return -1;
	for (size_t i = 0; i < CHUNKS; i++) {
		uint64_t t = now_ns();
		int k = alignment_class(i);

		if (pread(fd, buf, QUANTUM, LCM_OFFSET + (off_t)(i * QUANTUM)) != QUANTUM)
			return -1;
		by_class[k][filled[k]++] = now_ns() - t;
	}
	return 0;
}

/* Spike spacing: the smallest alignment whose chunks are, by their median over all passes,
 * far slower than the unaligned chunks'.  Medians per class, not a vote over the gaps
 * between slow chunks: on a busy host many hits are slowed by something else, and a vote
 * counted each pair of neighbouring stray spikes as a 512-byte unit. */
static int64_t spike_spacing(const struct probe_ctx *c, uint64_t *spikes)
{
	const char *name = "fsbm-probe-block";
	static uint64_t by_class[CLASSES][CHUNKS * PASSES_MAX];
	size_t filled[CLASSES] = { 0 };
	uint64_t hit;
	int64_t spacing = -1;
	int fd, rc = 0;

	if (probe_cold_file(c, name, LCM_OFFSET + 2 * SPAN) != 0)
		return -1;
	fd = openat(c->dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) != 0)
		return fail_errno("open", name);
	for (int pass = 0; pass < (c->quick ? 3 : PASSES_MAX) && rc == 0; pass++)
		rc = spike_pass(fd, by_class, filled);
	close(fd);
	unlinkat(c->dir, name, 0);
	if (rc != 0)
		return fail_errno("read", name);
	/* Class 0 (odd chunks) are hits for any unit above QUANTUM: the yardstick of a hit. */
	hit = median_u64(by_class[0], filled[0]);
	*spikes = 0;
	for (int k = CLASSES - 1; k >= 1; k--) {
		uint64_t median = median_u64(by_class[k], filled[k]);

		if (median <= 4 * hit)
			break;
		spacing = (int64_t)QUANTUM << k;
		*spikes += filled[k];
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
	json_kv_string(j, "transfer_unit_method", "Shenoy 2.2: the smallest alignment whose 512-byte reads are slow "
						    "(median over passes), readahead off, cold; "
						    "on Linux the page cache moves whole pages");
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
}
