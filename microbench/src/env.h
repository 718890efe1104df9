/*
 * env.h - the environment a result was measured in (DESIGN: record kernel, CPU, memory,
 * device, filesystem and its options, aging state, readahead and timer overhead).
 */
#ifndef FSBENCH_ENV_H
#define FSBENCH_ENV_H

#include <stdint.h>

#include "clock.h"

#include "json.h"

struct environment {
	char hostname[256];
	char kernel[256];
	char cpu_model[256];
	long cpus_online;
	uint64_t memory_bytes;
	char fs_type[64];
	char mount_point[1024];
	char mount_source[1024];
	char mount_options[1024];
	char super_options[1024];
	char device[64];          /* "maj:min" of the block device, empty for tmpfs */
	long read_ahead_kb;       /* -1 when the filesystem has no block device */
	uint64_t fs_block_size;   /* statvfs f_bsize */
	uint64_t fs_size_bytes;
	uint64_t fs_free_bytes;
	char clocksource[64];
	struct clock_costs clock;
	int pinned_cpu;           /* -1 when not pinned */
	char aging_state[256];    /* given by the caller: fsbench cannot tell how old a tree is */
};

/* Fill env for the filesystem holding `target`; returns -1 (reported) if target is unusable. */
int environment_probe(struct environment *env, const char *target);
void environment_write_json(const struct environment *env, struct json *j);

#endif
