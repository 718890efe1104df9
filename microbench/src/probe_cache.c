/*
 * probe_cache.c - how much file data the page cache holds (Shenoy 2.4).
 *
 * Read a file larger than the cache front to back, then back to front, timing each chunk:
 * the tail is still cached and comes back fast; the first chunk the cache dropped is slow,
 * and every chunk below it too.  The cache size is what lay between that chunk and the end.
 * Readahead is off for the backward pass (POSIX_FADV_RANDOM), so a miss reads only itself;
 * misses on the way back evict only pages older than the ones still to be read.
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

enum { CHUNK = 64 << 10, WARM_SAMPLES = 64, CONFIRM = 8 };

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

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int probe_cache_size(const struct probe_ctx *c, struct json *j)
{
	const char *name = "fsbm-probe-cache";
	struct sysinfo si;
	uint64_t limit = cgroup_limit(), memory, size, start = now_ns(), warm[WARM_SAMPLES], threshold;
	uint64_t boundary = 0, slow_run = 0, chunks;
	char *buf = xaligned(4096, CHUNK);
	int fd, found = 0;

	if (sysinfo(&si) != 0) {
		free(buf);
		return fail_errno("sysinfo", NULL);
	}
	memory = (uint64_t)si.totalram * si.mem_unit;
	size = limit && limit < memory ? limit + limit / 2 : memory + memory / 5;
	if (!(limit && limit < memory) && !c->asked) {
		json_kv_string(j, "skipped", "outside a memory cgroup the file must outgrow all of memory; run it in one "
					     "(fsbm probe --memory-limit SIZE) or name it (--only cache-size)");
		json_kv_u64(j, "file_bytes_needed", size);
		free(buf);
		return 0;
	}
	size = (size + CHUNK - 1) / CHUNK * CHUNK;
	chunks = size / CHUNK;
	if (probe_cold_file(c, name, size) != 0) {
		free(buf);
		return -1;
	}
	fd = openat(c->dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return fail_errno("open", name);
	}
	for (uint64_t k = 0; k < chunks; k++)
		if (pread(fd, buf, CHUNK, (off_t)(k * CHUNK)) != CHUNK)
			goto failed;
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) != 0)
		goto failed;
	/* The last chunks are surely cached: their cost is the hit cost. */
	for (int i = 0; i < WARM_SAMPLES; i++) {
		uint64_t t = now_ns();
		if (pread(fd, buf, CHUNK, (off_t)((chunks - 1 - (uint64_t)i) * CHUNK)) != CHUNK)
			goto failed;
		warm[i] = now_ns() - t;
	}
	qsort(warm, WARM_SAMPLES, sizeof(*warm), compare_u64);
	threshold = 10 * warm[WARM_SAMPLES / 2] > 100000 ? 10 * warm[WARM_SAMPLES / 2] : 100000;
	/* Backwards; the boundary is the first of CONFIRM slow chunks in a row (a lone slow hit
	 * is noise; below the boundary every chunk misses). */
	for (uint64_t k = chunks - 1 - WARM_SAMPLES; k + 1 > 0 && !found; k--) {
		uint64_t t = now_ns();
		if (pread(fd, buf, CHUNK, (off_t)(k * CHUNK)) != CHUNK)
			goto failed;
		if (now_ns() - t > threshold) {
			if (slow_run++ == 0)
				boundary = k;
			found = slow_run >= CONFIRM;
		} else {
			slow_run = 0;
		}
		if (k == 0)
			break;
	}
	close(fd);
	unlinkat(c->dir, name, 0);
	free(buf);
	json_key(j, "page_cache_bytes");
	if (found)
		json_u64(j, size - (boundary + 1) * CHUNK);
	else
		json_null(j);
	json_key(j, "cgroup_limit_bytes");
	if (limit && limit < memory)
		json_u64(j, limit);
	else
		json_null(j);
	json_kv_u64(j, "memory_bytes", memory);
	json_kv_u64(j, "file_bytes", size);
	json_kv_u64(j, "warm_read_ns", warm[WARM_SAMPLES / 2]);
	json_kv_u64(j, "threshold_ns", threshold);
	json_kv_string(j, "method", "Shenoy 2.4: read a file larger than the cache forward, then backward without "
				    "readahead; the cache is what lies above the first of 8 slow chunks in a row");
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
failed:
	fail_errno("read", name);
	close(fd);
	unlinkat(c->dir, name, 0);
	free(buf);
	return -1;
}
