/*
 * probe_cache.c - how much file data the page cache holds, two ways.
 *
 * Shenoy 2.4: read a file larger than the cache front to back, then back to front, timing
 * each chunk: the tail is still cached and comes back fast; the first chunk the cache
 * dropped is slow, and every chunk below it too.  Where the kernel counts the bytes it
 * fetched from storage for this process (/proc/self/io), that count, not the time, says
 * which chunks missed.  The cache size is what lay between that
 * chunk and the end.  Readahead is off for the backward pass (POSIX_FADV_RANDOM), so a miss
 * reads only itself, and misses evict only pages older than the ones still to be read.
 *
 * Tang 4.1 (phase II): binary search on a size S: read S bytes sequentially, then the same
 * bytes again in a random order; if every chunk of the second pass is fast, S fits.
 *
 * The file must outgrow the cache: 1.5x the memory cgroup's limit when the probe runs in
 * one (fsbm probe --memory-limit makes one), else 1.2x the machine's memory.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "probe.h"
#include "util.h"

enum { CHUNK = 64 << 10, WARM_SAMPLES = 64, CONFIRM = 8, VERIFY = 64 };
/* Each method errs one way only: a chunk the kernel says it fetched was not cached, so a
 * pass can find too little cache (another charge to the cgroup, or reclaim running below the
 * limit for a moment), never too much.  Shenoy's pass is run SHENOY_PASSES times and the
 * largest kept; Tang's search believes a "does not fit" only when a second test agrees. */
enum { SHENOY_PASSES = 3 };
/* Below a true boundary at least 9 chunks in 10 miss. */
enum { SLOW_SHARE_NUM = 9, SLOW_SHARE_DEN = 10 };

/* This process's memory cgroup (v1 or v2) limit, or 0 when there is none. */
static uint64_t cgroup_limit(void)
{
	char line[512], path[768], value[64];
	FILE *f = fopen("/proc/self/cgroup", "r");
	uint64_t limit = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *controllers = strchr(line, ':'), *group;
		if (!controllers || !(group = strchr(controllers + 1, ':')))
			continue;
		*group++ = '\0';
		group[strcspn(group, "\n")] = '\0';
		if (strcmp(controllers + 1, "memory") == 0)
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", group);
		else if (controllers[1] == '\0')
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", group);
		else
			continue;
		if (read_text_file(path, value, sizeof(value)) == 0 && strcmp(value, "max") != 0) {
			uint64_t v = strtoull(value, NULL, 10);
			if (v > 0 && (limit == 0 || v < limit))
				limit = v;
		}
	}
	fclose(f);
	return limit;
}

static int read_chunk(int fd, char *buf, uint64_t k, uint64_t *ns)
{
	uint64_t t = now_ns();

	if (pread(fd, buf, CHUNK, (off_t)(k * CHUNK)) != CHUNK)
		return -1;
	*ns = now_ns() - t;
	return 0;
}

/* Bytes this process has had read from storage (/proc/self/io), or -1 without I/O accounting. */
static int64_t storage_read_bytes(void)
{
	char text[512], *line;

	if (read_text_file("/proc/self/io", text, sizeof(text)) != 0 || !(line = strstr(text, "read_bytes: ")))
		return -1;
	return strtoll(line + strlen("read_bytes: "), NULL, 10);
}

/* Shenoy: forward, then backward until CONFIRM slow chunks in a row (one slow hit is noise;
 * below the boundary every chunk misses), and at least SLOW_SHARE of the VERIFY chunks from
 * there on slow too: a stall of the machine (another program's writeback, say) can make a
 * few cached chunks slow in a row, but not nearly every chunk for 4 MiB (in the full test
 * suite, once: 176 MiB found under a 256 MiB limit, where alone it finds 255).  The bytes
 * above the boundary, or -1. */
static int shenoy_backward(int fd, char *buf, uint64_t chunks, uint64_t *warm_ns, uint64_t *threshold,
			   int64_t *bytes)
{
	uint64_t warm[WARM_SAMPLES], ns, boundary = 0, slow_run = 0, checked = 0, slow_seen = 0;
	int64_t fetched, after;

	*bytes = -1;
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL) != 0)
		return -1;
	for (uint64_t k = 0; k < chunks; k++)
		if (read_chunk(fd, buf, k, &ns) != 0)
			return -1;
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) != 0)
		return -1;
	/* The last chunks are surely cached: their cost is the hit cost. */
	for (int i = 0; i < WARM_SAMPLES; i++)
		if (read_chunk(fd, buf, chunks - 1 - (uint64_t)i, &warm[i]) != 0)
			return -1;
	*warm_ns = median_u64(warm, WARM_SAMPLES);
	*threshold = 10 * *warm_ns > 100000 ? 10 * *warm_ns : 100000;
	for (uint64_t i = WARM_SAMPLES; i < chunks; i++) {
		uint64_t k = chunks - 1 - i;
		int slow;

		fetched = storage_read_bytes();
		if (read_chunk(fd, buf, k, &ns) != 0)
			return -1;
		after = fetched >= 0 ? storage_read_bytes() : -1;
		/* A miss is a chunk the kernel fetched from storage, where it counts that for us: a
		 * stalled hit on a shared host is slow but fetches nothing.  By time only without. */
		slow = after >= 0 ? after - fetched >= CHUNK / 2 : ns > *threshold;
		if (checked) { /* a boundary found: is it one? */
			checked++;
			slow_seen += (uint64_t)slow;
		} else if (!slow) {
			slow_run = 0;
			continue;
		} else {
			if (slow_run++ == 0)
				boundary = k;
			if (slow_run < CONFIRM)
				continue;
			checked = slow_seen = slow_run;
		}
		if (checked < VERIFY && k > 0)
			continue;
		if (slow_seen * SLOW_SHARE_DEN >= checked * SLOW_SHARE_NUM) {
			*bytes = (int64_t)((chunks - boundary - 1) * CHUNK);
			return 0;
		}
		checked = slow_seen = slow_run = 0;
	}
	return 0;
}

/* Tang: does a prefix of `chunks` chunks stay cached through a re-read in random order?  Tang
 * timed each read; on a shared host a stalled hit looks like a miss, so where the kernel counts
 * the bytes it fetched from storage for us, that count decides, and time only without it. */
static int fits(int fd, char *buf, uint64_t chunks, uint64_t threshold, struct rng *r, int *answer)
{
	size_t *order = xcalloc(chunks, sizeof(size_t));
	uint64_t ns, slow = 0;
	int64_t fetched_before, fetched_after;
	int rc = 0;

	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL) != 0)
		rc = -1;
	for (uint64_t k = 0; k < chunks && rc == 0; k++)
		rc = read_chunk(fd, buf, k, &ns);
	if (rc == 0)
		rc = posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	make_order(order, chunks, 1, r);
	fetched_before = storage_read_bytes();
	for (uint64_t i = 0; i < chunks && rc == 0; i++) {
		rc = read_chunk(fd, buf, order[i], &ns);
		slow += ns > threshold;
	}
	fetched_after = storage_read_bytes();
	free(order);
	if (fetched_before >= 0 && fetched_after >= 0)
		slow = (uint64_t)(fetched_after - fetched_before) / CHUNK;
	*answer = slow * 200 <= chunks; /* at most 0.5% missed */
	return rc;
}

static int tang_binary_search(int fd, char *buf, uint64_t chunks, uint64_t threshold, uint64_t step,
			      int64_t *bytes, int *tests)
{
	uint64_t lo = 0, hi = chunks; /* lo fits; hi (the whole file, 1.5x the cache) does not */
	struct rng r;
	int answer;

	rng_seed(&r, 1);
	*tests = 0;
	while (hi - lo > step) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (fits(fd, buf, mid, threshold, &r, &answer) != 0)
			return -1;
		(*tests)++;
		if (!answer) {
			if (fits(fd, buf, mid, threshold, &r, &answer) != 0)
				return -1;
			(*tests)++;
		}
		if (answer)
			lo = mid;
		else
			hi = mid;
	}
	*bytes = (int64_t)(lo * CHUNK);
	return 0;
}

static void json_size_or_null(struct json *j, const char *key, int64_t bytes)
{
	json_key(j, key);
	if (bytes >= 0)
		json_i64(j, bytes);
	else
		json_null(j);
}

int probe_cache_size(const struct probe_ctx *c, struct json *j)
{
	const char *name = "fsbm-probe-cache";
	struct sysinfo si;
	uint64_t limit = cgroup_limit(), memory, size, start = now_ns(), chunks, warm_ns = 0, threshold = 0;
	int64_t shenoy = -1, tang = -1;
	int tests = 0, fd, bounded;
	char *buf;

	if (sysinfo(&si) != 0)
		return fail_errno("sysinfo", NULL);
	memory = (uint64_t)si.totalram * si.mem_unit;
	bounded = limit && limit < memory;
	size = bounded ? limit + limit / 2 : memory + memory / 5;
	if (!bounded && !c->asked) {
		json_kv_string(j, "skipped", "outside a memory cgroup the file must outgrow all of memory; run it in one "
					     "(fsbm probe --memory-limit SIZE) or name it (--only cache-size)");
		json_kv_u64(j, "file_bytes_needed", size);
		return 0;
	}
	chunks = (size + CHUNK - 1) / CHUNK;
	if (probe_cold_file(c, name, chunks * CHUNK) != 0)
		return -1;
	fd = openat(c->dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno("open", name);
	buf = xaligned(4096, CHUNK);
	uint64_t shenoy_start = now_ns();
	int64_t passes[SHENOY_PASSES];
	int rc = 0;
	for (int p = 0; p < SHENOY_PASSES && rc == 0; p++) {
		rc = shenoy_backward(fd, buf, chunks, &warm_ns, &threshold, &passes[p]);
		if (passes[p] > shenoy)
			shenoy = passes[p];
	}
	double shenoy_s = (double)(now_ns() - shenoy_start) / 1e9;
	/* Tang's search to within 1/50 of the file (1/20 with --quick). */
	if (rc == 0)
		rc = tang_binary_search(fd, buf, chunks, threshold, chunks / (c->quick ? 20 : 50) + 1, &tang, &tests);
	close(fd);
	unlinkat(c->dir, name, 0);
	free(buf);
	if (rc != 0)
		return fail_errno("read", name);
	json_size_or_null(j, "page_cache_bytes", shenoy);
	json_key(j, "page_cache_passes_bytes");
	json_begin_array(j);
	for (int p = 0; p < SHENOY_PASSES; p++) {
		if (passes[p] >= 0)
			json_i64(j, passes[p]);
		else
			json_null(j); /* as page_cache_bytes is, for a pass that found no boundary */
	}
	json_end_array(j);
	json_size_or_null(j, "binary_search_bytes", tang);
	json_size_or_null(j, "cgroup_limit_bytes", bounded ? (int64_t)limit : -1);
	json_kv_u64(j, "memory_bytes", memory);
	json_kv_u64(j, "file_bytes", chunks * CHUNK);
	json_kv_u64(j, "warm_read_ns", warm_ns);
	json_kv_u64(j, "threshold_ns", threshold);
	json_kv_double(j, "shenoy_seconds", shenoy_s);
	json_kv_i64(j, "binary_search_tests", tests);
	json_kv_string(j, "method", "Shenoy 2.4: read a file larger than the cache forward, then backward without "
				    "readahead; the cache is what lies above the first of 8 slow chunks in a row, "
				    "the largest of 3 passes. binary_search: Tang, the largest prefix that a "
				    "random-order re-read finds cached (misses counted by /proc/self/io read_bytes where it exists, else timed; a size that "
				    "misses is tested twice)");
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
}
