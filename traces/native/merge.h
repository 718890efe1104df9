/*
 * merge.h - the logs of one strace -ff run (LOG.<pid>, one per process) read as one stream
 * in time order.
 *
 * Each log is in time order already, so a heap on every log's next line keeps the stream in
 * order.  A line's key is its timestamp (a line without one takes the last stamp of its log,
 * 0 before any), then its line number in its own log, then its pid: the order every parse of
 * these logs agrees on, whether it reads all of them or one process group's (forks.h).
 * A log is opened when the stream reaches its first line and closed at its end, so a run of
 * ten thousand short processes needs only as many open files as it had processes at once.
 */
#ifndef S2E_MERGE_H
#define S2E_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "lines.h"
#include "reader.h"

/* Where a line sorts among the lines of every log of the run. */
struct line_key {
	int64_t ns;
	long line;
	long pid;
};

struct pidlog {
	long pid;
	char *path;
	struct reader rd;       /* the log, open while the stream is in it; rd.text is the current line */
	struct line_key key;    /* of the current line */
	int64_t last_ns;        /* the last stamp seen in this log */
	struct line split;      /* the current line split (lines.h) */
	struct line_key first;  /* the first line's key, known before the log is opened */
};

struct merge {
	struct pidlog *logs;  /* sorted by first key */
	size_t nlogs, unopened; /* logs[unopened..] are not opened yet */
	size_t *heap;         /* indexes of open logs, by current key */
	size_t nheap;
	int have_current;     /* logs[heap[0]]'s line was handed out: advance it on the next call */
};

/* The logs named in `list`: one "PID<TAB>PATH" a line.  Reads each log's first line to place
 * it; on failure prints "PATH: why" and exits 2. */
void merge_open(struct merge *m, const char *list);
/* The next line of the run, or NULL at the end of every log.  The text stays valid until the
 * next call. */
const struct pidlog *merge_next(struct merge *m);
void merge_close(struct merge *m);

int key_before(const struct line_key *a, const struct line_key *b);

#endif
