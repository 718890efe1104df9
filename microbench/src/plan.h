/*
 * plan.h - a replay plan: the tree a trace needs, then its operations (DESIGN: Replay).
 *
 * The plan is text, one record per line, fields separated by tabs; in paths a tab, a
 * newline and a backslash are written \t, \n and \\.  traces/replay_plan.py writes it:
 *
 *   fsbm-replay-plan	1
 *   actors	N        handles	N        maxio	BYTES
 *   D	path                          a directory of the initial tree
 *   F	size	path                      a file of the initial tree, `size` bytes of data
 *   L	target	path                    a symbolic link of the initial tree, holding `target`
 *   O	actor	kind	handle	flags	mode	offset	size	errno	think_ns	dep	timed	path	path2
 *
 * An O line is one operation: `kind` a name from plan_kind_names, `handle` the open file
 * it uses (-1: none), `flags`/`mode` for open, `offset` -1 for the file position, `errno`
 * the error the trace saw (0: success); for copy (copy_file_range), `handle` is the
 * destination, `flags` the source's handle, read from its file position, and `path2` the
 * source's name; for mmap, `offset` and `size` are the region a process mapped and read through
 * (characterizer/mapped.py); neither's `size` is bounded by maxio, since the kernel moves
 * those bytes without a buffer; `think_ns` the actor's idle time before it, `dep`
 * the operation (index among O lines) that must finish first (-1: none; ARTC's order of
 * operations on one file or directory across actors), `timed` 0 for the opens and closes
 * the plan adds around NFS traffic, which has none.
 */
#ifndef FSBENCH_PLAN_H
#define FSBENCH_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum op_kind {
	OP_OPEN, OP_CLOSE, OP_READ, OP_WRITE, OP_FSYNC, OP_FDATASYNC, OP_STAT, OP_LSTAT, OP_FSTAT,
	OP_ACCESS, OP_UNLINK, OP_MKDIR, OP_RMDIR, OP_RENAME, OP_LINK, OP_SYMLINK, OP_READLINK,
	OP_READDIR, OP_GETDENTS, OP_TRUNCATE, OP_FTRUNCATE, OP_CHMOD, OP_UTIMES, OP_MMAP, OP_COPY, OP_KINDS
};

extern const char *const plan_kind_names[OP_KINDS];

struct plan_op {
	uint32_t actor;
	uint8_t kind;
	uint8_t timed;
	int32_t handle;
	int32_t flags;
	uint32_t mode;
	int64_t offset;
	uint64_t size;
	int32_t expect_errno;
	uint64_t think_ns;
	int64_t dep;
	const char *path;  /* never NULL; "" when the operation has none */
	const char *path2;
};

struct plan_entry { /* a directory (size < 0), a file, or a symbolic link of the initial tree */
	int64_t size;
	const char *path;
	const char *target; /* a link's text; NULL for a directory or a file */
};

struct plan {
	uint32_t actors;
	uint32_t handles;
	uint64_t max_io;
	struct plan_op *ops;
	size_t n_ops, cap_ops;
	struct plan_entry *tree;
	size_t n_tree, cap_tree;
	char **strings; /* every path, freed with the plan */
	size_t n_strings, cap_strings;
};

/* Read a plan; on a bad line print "FILE:LINE: what was expected" and return -1. */
int plan_load(const char *path, struct plan *p);
void plan_free(struct plan *p);

#endif
