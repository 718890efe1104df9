/*
 * probe_names.c - what the name-lookup (dentry) and inode caches are worth (Tang 4.1, phase
 * II): stat the last of N files just statted in order, which is surely cached, against all
 * N in a random permutation.  If the caches hold all N, a random stat costs what the last
 * one did; the same permutation after dropping the caches shows what a miss costs.
 * On Linux these caches grow with free memory, so N files fit unless memory is scarce;
 * the probe says whether they did.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "clock.h"
#include "json.h"
#include "probe.h"
#include "util.h"

enum { LAST_SAMPLES = 256 };

static void file_name(char *buf, size_t len, size_t i)
{
	snprintf(buf, len, "fsbm-probe-names/f%06zu", i);
}

/* The median cost of statting the files in the given order. */
static int stat_all(int dir, const size_t *order, size_t n, uint64_t *median_ns)
{
	uint64_t *ns = xcalloc(n, sizeof(*ns));
	struct stat st;
	char name[64];

	for (size_t i = 0; i < n; i++) {
		file_name(name, sizeof(name), order[i]);
		uint64_t t = now_ns();
		if (fstatat(dir, name, &st, 0) != 0) {
			free(ns);
			return fail_errno("stat", name);
		}
		ns[i] = now_ns() - t;
	}
	*median_ns = median_u64(ns, n);
	free(ns);
	return 0;
}

static void remove_files(int dir, size_t n)
{
	char name[64];

	for (size_t i = 0; i < n; i++) {
		file_name(name, sizeof(name), i);
		unlinkat(dir, name, 0);
	}
	unlinkat(dir, "fsbm-probe-names", AT_REMOVEDIR);
}

int probe_name_cache(const struct probe_ctx *c, struct json *j)
{
	size_t n = c->quick ? 2000 : 20000, made = 0;
	size_t *in_order = xcalloc(n, sizeof(size_t)), *shuffled = xcalloc(n, sizeof(size_t));
	uint64_t start = now_ns(), last[LAST_SAMPLES], last_ns = 0, warm_ns = 0, cold_ns = 0, ordered_ns;
	struct rng r;
	struct stat st;
	char name[64];
	int rc = 0, can_drop = cache_can_drop_all();

	if (mkdirat(c->dir, "fsbm-probe-names", 0755) != 0) {
		free(in_order);
		free(shuffled);
		return fail_errno("mkdir", "fsbm-probe-names");
	}
	for (; made < n && rc == 0; made++) {
		file_name(name, sizeof(name), made);
		int fd = openat(c->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		rc = fd < 0 ? fail_errno("create", name) : close(fd);
	}
	rng_seed(&r, 1);
	make_order(in_order, n, 0, &r);
	make_order(shuffled, n, 1, &r);
	/* Tang: stat them all in order, then the last one again and again: a hit each time. */
	if (rc == 0 && can_drop)
		rc = cache_drop_all();
	if (rc == 0)
		rc = stat_all(c->dir, in_order, n, &ordered_ns);
	file_name(name, sizeof(name), n - 1);
	for (int i = 0; i < LAST_SAMPLES && rc == 0; i++) {
		uint64_t t = now_ns();
		rc = fstatat(c->dir, name, &st, 0) == 0 ? 0 : fail_errno("stat", name);
		last[i] = now_ns() - t;
	}
	if (rc == 0) {
		last_ns = median_u64(last, LAST_SAMPLES);
		rc = stat_all(c->dir, shuffled, n, &warm_ns);
	}
	/* The same permutation with the caches dropped: what a miss costs. */
	if (rc == 0 && can_drop && (rc = cache_drop_all()) == 0)
		rc = stat_all(c->dir, shuffled, n, &cold_ns);
	remove_files(c->dir, made);
	free(in_order);
	free(shuffled);
	if (rc != 0)
		return -1;
	json_kv_u64(j, "files", n);
	json_kv_u64(j, "stat_last_ns", last_ns);
	json_kv_u64(j, "stat_random_warm_ns", warm_ns);
	json_key(j, "stat_random_cold_ns");
	if (can_drop)
		json_u64(j, cold_ns);
	else
		json_null(j);
	json_kv_bool(j, "caches_hold_all", warm_ns < 2 * last_ns + 500);
	json_kv_string(j, "method", "Tang 4.1 phase II: stat N files in order, the last again (a hit), then all N in "
				    "a random permutation, warm and after dropping dentries and inodes");
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
}
