/*
 * replay_ops.h - one plan operation executed for real, beneath the target directory.
 */
#ifndef FSBENCH_REPLAY_OPS_H
#define FSBENCH_REPLAY_OPS_H

#include <stdint.h>

#include "plan.h"

enum { DIR_CACHE_SLOTS = 256 };

/* Parent directories recently resolved, so a stat costs one fstatat as it did traced. */
struct dir_cache {
	char *name[DIR_CACHE_SLOTS];
	int fd[DIR_CACHE_SLOTS];
	uint64_t generation;
};

struct replay_ctx {
	int root;          /* the target directory */
	int *fds;          /* plan handle -> descriptor, shared: a handle belongs to one actor */
	char *buf;         /* plan->max_io bytes, this thread's */
	struct dir_cache cache;
	int skip_syncs;    /* syncs succeed at once and opens drop O_SYNC/O_DSYNC (--skip-syncs) */
};

void replay_ctx_init(struct replay_ctx *c, int root, int *fds, uint64_t max_io);
/* Frees memory; the cached directory descriptors are left for exit to close. */
void replay_ctx_free(struct replay_ctx *c);

/* Run one operation; 0 on success, else the errno it failed with. */
int replay_op(struct replay_ctx *c, const struct plan_op *op);

#endif
