/*
 * probe_readahead.c - how far the filesystem reads ahead of a sequential reader (Shenoy 2.3).
 *
 * Read the start of a cold file sequentially so readahead ramps up to its full window,
 * pause so the I/O in flight completes, then read on in small chunks, timing each: what was
 * read ahead comes from the cache, and the first chunk that has to wait for the disk marks
 * the end of it.  The distance from where the reader paused to that chunk is the depth.
 *
 * Two things this kernel does that the timing allows for: the first read after the pause
 * lands on the page marked for readahead and pays for submitting the next window (a slow
 * read that is not a wait), so it is not counted; and a cached read can take tens of
 * microseconds now and then, so only a read slower than both ten cached reads and 50 us
 * counts as a wait.  What timing cannot settle is a race: on fast storage the next window
 * can arrive before the reader gets there, and the first wait comes a window later.  So the
 * depth reported is what mincore() shows resident past the reader at the pause, which is
 * exactly what was read ahead; Shenoy's timed depth is recorded beside it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "probe.h"
#include "util.h"

enum { CHUNK = 4096, RAMP_CHUNK = 64 << 10, WARM_SAMPLES = 64 };

/* Bytes resident in the page cache from `from` on, without reading them; -1 if unknown. */
static int64_t resident_after(int fd, uint64_t from, uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = (size_t)((size - from) / (uint64_t)page);
	unsigned char *vec = xcalloc(pages ? pages : 1, 1);
	void *map = mmap(NULL, size - from, PROT_READ, MAP_SHARED, fd, (off_t)from);
	int64_t bytes = -1;

	if (map != MAP_FAILED) {
		if (mincore(map, size - from, vec) == 0) {
			size_t n = 0;
			while (n < pages && (vec[n] & 1))
				n++;
			bytes = (int64_t)n * page;
		}
		munmap(map, size - from);
	}
	free(vec);
	return bytes;
}

struct trial {
	int found;
	uint64_t depth, warm_ns, threshold_ns, reads;
	int64_t resident;
};

/* One measurement on the (evicted) file: ramp, pause, then the timed reads. */
static int one_trial(int fd, uint64_t size, uint64_t ramp, char *buf, struct trial *t)
{
	uint64_t warm[WARM_SAMPLES];
	struct timespec pause = { 0, 300 * 1000 * 1000 };

	memset(t, 0, sizeof(*t));
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		return -1;
	for (uint64_t off = 0; off < ramp; off += RAMP_CHUNK)
		if (pread(fd, buf, RAMP_CHUNK, (off_t)off) != RAMP_CHUNK)
			return -1;
	nanosleep(&pause, NULL);
	/* What a cached chunk costs here: re-read the start, which is in the cache. */
	for (int i = 0; i < WARM_SAMPLES; i++) {
		uint64_t start = now_ns();
		if (pread(fd, buf, CHUNK, (off_t)i * CHUNK) != CHUNK)
			return -1;
		warm[i] = now_ns() - start;
	}
	t->warm_ns = median_u64(warm, WARM_SAMPLES);
	t->threshold_ns = 10 * t->warm_ns > 50000 ? 10 * t->warm_ns : 50000;
	t->resident = resident_after(fd, ramp, size);
	for (uint64_t off = ramp; off + CHUNK <= size; off += CHUNK) {
		uint64_t start = now_ns();
		if (pread(fd, buf, CHUNK, (off_t)off) != CHUNK)
			return -1;
		t->reads++;
		if (off > ramp && now_ns() - start > t->threshold_ns) {
			t->depth = off - ramp;
			t->found = 1;
			break;
		}
	}
	return 0;
}

static int by_resident(const void *a, const void *b)
{
	const struct trial *x = a, *y = b;

	return x->resident < y->resident ? -1 : x->resident > y->resident;
}

/*
 * A cached read that is slow for another reason (an interrupt, the scheduler) would end a
 * trial early, so the probe runs several and keeps the median: such a blip only ever
 * shortens a trial, and it does not strike most of them.
 */
int probe_readahead(const struct probe_ctx *c, struct json *j)
{
	const char *name = "fsbm-probe-readahead";
	uint64_t size = c->quick ? 64ULL << 20 : 256ULL << 20, ramp = 16ULL << 20, start = now_ns();
	int n_trials = c->quick ? 3 : 7, found = 0;
	struct trial trials[7];
	char *buf = xaligned(4096, RAMP_CHUNK);
	int fd;

	if (probe_cold_file(c, name, size) != 0) {
		free(buf);
		return -1;
	}
	fd = openat(c->dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return fail_errno("open", name);
	}
	for (int i = 0; i < n_trials; i++) {
		if (one_trial(fd, size, ramp, buf, &trials[i]) != 0) {
			fail_errno("read", name);
			close(fd);
			free(buf);
			return -1;
		}
		found += trials[i].found;
	}
	close(fd);
	unlinkat(c->dir, name, 0);
	free(buf);
	uint64_t timed[7];
	for (int i = 0; i < n_trials; i++)
		timed[i] = trials[i].found ? trials[i].depth : UINT64_MAX;
	median_u64(timed, (size_t)n_trials); /* sorts them */
	qsort(trials, (size_t)n_trials, sizeof(*trials), by_resident);
	const struct trial *median = &trials[n_trials / 2];
	json_key(j, "readahead_bytes");
	if (median->resident >= 0)
		json_i64(j, median->resident);
	else
		json_null(j);
	json_key(j, "timed_depth_bytes");
	if (found > n_trials / 2)
		json_u64(j, timed[n_trials / 2]);
	else
		json_null(j);
	json_key(j, "timed_trials_bytes");
	json_begin_array(j);
	for (int i = 0; i < n_trials; i++)
		if (timed[i] == UINT64_MAX)
			json_null(j);
		else
			json_u64(j, timed[i]);
	json_end_array(j);
	json_kv_u64(j, "warm_read_ns", median->warm_ns);
	json_kv_u64(j, "threshold_ns", median->threshold_ns);
	json_kv_string(j, "method", "Shenoy 2.3: ramp 16 MiB sequentially, pause 300 ms; depth = bytes resident past "
				    "the reader (mincore), median of several trials; timed_depth = bytes read from the "
				    "cache before the first read that waits for the disk (Shenoy's view; it can miss a "
				    "window on fast storage)");
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
}
