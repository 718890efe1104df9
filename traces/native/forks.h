/*
 * forks.h - what the parse of one process group hands to the parses of the others.
 *
 * The logs of an strace -ff run can be parsed a process group at a time, in parallel.  A group
 * is the processes that share an fd table or a working directory (a process and its threads);
 * no other state of the kernel's crosses between groups except at a fork, where the child's
 * group starts from a copy of its parent's: the fd table, the open file descriptions behind
 * it, the working directory, and the clock (a -t log's midnights so far).  So the parse of a
 * group writes that state for every fork out of it (forks_dir/<child pid>.state), and the
 * parse of the child's group starts from it.  One parse can take several groups, none of
 * them forked by another of them.
 *
 * One thing stays shared after a fork: an open file description's offset, which parent and
 * child move together.  A description becomes shared at the first fork that copies it; from
 * then on every parse that holds it writes each change of its offset, keyed by the line that
 * made it (merge.h), to the shared-ops file.  Once every group is parsed, the offsets of the
 * reads and writes through shared descriptions are worked out again in key order
 * (traces/per_process.py).  Columns: id key_ns key_line pid kind a b c seq, where seq is the
 * event whose offset the row decides (SHARED_RW), -1 for the others.
 */
#ifndef S2E_FORKS_H
#define S2E_FORKS_H

#include <stdint.h>

#include "merge.h"
#include "procs.h"

enum shared_kind {
	SHARED_FROM,       /* the first fork: a = offset, b = end, c = O_APPEND */
	SHARED_RW,         /* read/write at the offset: a = is a write, b = bytes moved */
	SHARED_POSITIONAL, /* pread/pwrite: a = offset, b = bytes moved (may move the end) */
	SHARED_SEEK,       /* lseek: a = the new offset */
	SHARED_APPEND,     /* fcntl F_SETFL: a = O_APPEND */
	SHARED_ADVANCE,    /* copy_file_range's source without an offset: a = bytes moved */
};

/* Parse as process group `group`: forks out of it write the child's state into forks_dir,
 * changes of shared offsets go to ops_path.  `clock` is the parser's day offset and last
 * time of day, carried into every child. */
void forks_start(long group, const char *forks_dir, const char *ops_path, int64_t *day_offset, int64_t *last_tod);
int forks_on(void);
/* The line being parsed: what the rows written for its call are keyed by. */
void forks_line(const struct line_key *key);
/* A change of o's offset by the current call, written if o is shared. */
void forks_op(const struct ofd *o, enum shared_kind kind, int64_t a, int64_t b, int64_t c);
/* The current call is done: `seq` is the event it made, or -1. */
void forks_call_done(long seq);
/* A fork gave `child` its own fd table and working directory: write them for its group. */
void forks_fork(const struct proc *child);
/* Start each process group's first process from the state its parent's parse wrote: `list`
 * holds one "ROOT<TAB>PATH" a line.  The clock is the earliest fork's. */
void forks_load_all(const char *list, struct procs *ps, int64_t *day_offset, int64_t *last_tod);
void forks_end(void);

#endif
