/*
 * probe.h - fsbench phase II (Tang 4.1) and Shenoy's black-box probes: the parameters that
 * decide a filesystem's performance, found from user space (issue 6).  One file per probe;
 * each works in a scratch file of its own beneath the target and writes one JSON object.
 */
#ifndef FSBENCH_PROBE_H
#define FSBENCH_PROBE_H

#include <stdint.h>

struct json;

struct probe_ctx {
	int dir;          /* the target directory */
	const char *target;
	int quick;        /* smaller files, fewer repetitions: seconds, not minutes */
	int asked;        /* the probes were named with --only, not run by default */
};

/* Each returns 0 after writing its members (the key is already written), -1 on error. */
int probe_block_size(const struct probe_ctx *c, struct json *j);
int probe_readahead(const struct probe_ctx *c, struct json *j);
int probe_direct_blocks(const struct probe_ctx *c, struct json *j);
int probe_cache_size(const struct probe_ctx *c, struct json *j);
int probe_name_cache(const struct probe_ctx *c, struct json *j);

/* A file beneath the target filled with `size` bytes, fsynced and evicted from the cache. */
int probe_cold_file(const struct probe_ctx *c, const char *name, uint64_t size);

#endif
