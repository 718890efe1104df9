/*
 * timeline.h - where a traced job's time went, beyond its file calls: how many calls of
 * every kind each process made (each one a ptrace stop that the untraced job does not pay),
 * how long the processes lived and how much of that they spent blocked waiting for another
 * process (wait4, poll, a read on a pipe), and how much of each gap and call stood above
 * what tracing cost it then.  The predictor takes the job's untraced time outside the
 * filesystem from these (predictor/tracing.py).
 */
#ifndef S2E_TIMELINE_H
#define S2E_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "args.h"

enum { TIMELINE_WINDOW = 32, TIMELINE_UNTIMED_CAPS = 8 };
/* The operations of DESIGN.md's vocabulary (traces/vocabulary.py's OPERATIONS), in its order. */
#define TIMELINE_OPERATIONS "open", "close", "create", "read", "write", "stat", "setattr", "readdir", "mkdir", \
	"rmdir", "unlink", "rename", "link", "symlink", "readlink", "fsync", "seek", "mmap", "other"
enum { TIMELINE_FILE_OPS = 19 };
/* The histogram of how much longer a gap after a timed call took than its process's median
 * call: TIMELINE_OVER_BINS bins of TIMELINE_OVER_BIN_NS from TIMELINE_OVER_LOW_NS, the first
 * and last holding everything beyond them (fsbm/documents.py's GAP_OVER_CALL_BINS). */
enum { TIMELINE_OVER_BINS = 256, TIMELINE_OVER_BIN_NS = 500, TIMELINE_OVER_LOW_NS = -32000 };
/* The histogram of a log without -T's gaps from one bare call to the next: TIMELINE_BARE_BINS
 * bins of a microsecond from 0, the last holding everything beyond (fsbm/documents.py's
 * BARE_GAP_BIN_NS). */
enum { TIMELINE_BARE_BINS = 256 };

/* The last TIMELINE_WINDOW values of a series, as they came and in order (for their median). */
struct window {
	int64_t ring[TIMELINE_WINDOW];
	int64_t sorted[TIMELINE_WINDOW];
	long n; /* values pushed so far */
};

/* The last gaps from one kind of bare call to another (close then close, fstat then lseek),
 * in any process: `key` names the pair (timeline.c's pair_gaps). */
struct pair_window {
	int key;
	struct window gaps;
};

/* Such windows, one for each pair seen: `n` of them in an array of `cap`. */
struct pair_windows {
	struct pair_window *at;
	int n, cap;
};

/* A process's lifetime, and its last TIMELINE_WINDOW gaps and call durations: their median is
 * what tracing costs a gap or a call of this process just then (timeline.c says why).  `gaps`
 * run from a call's end, `starts` from a call's start where the log gives no end (no -T);
 * `bare` holds its last bare calls' durations, whose median is how slow a bare call of it is
 * just then. */
struct lifetime {
	long pid;       /* 0: empty slot */
	int64_t first_ns, last_ns, prev_end_ns;
	int prev_timed; /* whether the previous call's duration was known (prev_end_ns is its end) */
	int prev_mapped; /* whether the previous call mapped a file of a filesystem (an mmap event) */
	int prev_bare;   /* the previous call's bare kind (timeline.c's bare_kind), 0 for none */
	int prev_synced; /* whether the previous call flushed a file to the device (an fsync event) */
	int prev_op;     /* the previous call's file operation, its place in OPERATIONS + 1; 0: none */
	struct window gaps, starts, durs, bare;
};

struct timeline {
	struct lifetime *slot;
	size_t cap, count;
	long calls, timed_calls, blocking_calls, execs, forks;
	/* blocked_ns: in blocking calls whose duration the log gives (-T, or an unfinished call's
	 * resumption); untimed_blocked_ns: the part of it known without -T. */
	int64_t blocked_ns, untimed_blocked_ns;
	/* Above the local median: the gaps' (user time), the calls' outside the file calls, and
	 * the file calls' (their time on the traced filesystem). */
	int64_t user_ns, calls_excess_ns, file_calls_excess_ns;
	/* The same, each gap and call's signed distance from the median summed: the scatter of
	 * tracing's cost about its median, and the work.  The scatter does not cancel: a bare
	 * call's cost leans above its median, so each call not on a file adds its lean, which the
	 * rule takes off per call (other_calls: how many calls_signed_ns sums). */
	int64_t user_signed_ns, calls_signed_ns, file_calls_signed_ns;
	long other_calls;
	/* Of file_calls_signed_ns, the calls but flushes that took TIMELINE_LONG_CALL_NS or more
	 * above their median, summed: no tracing stop takes that long here (15-100 us), so it is
	 * the traced filesystem's own time, which a reading of the log without -T takes off as no
	 * less than the cost model's (predictor/predict.py; a flush's gap it leaves out already). */
	int64_t file_calls_long_ns;
	/* Calls of the kinds that do little and never wait (timeline.c's bare_kind), and their signed
	 * distances from their process's median call summed: how far tracing's cost leans above
	 * its median in this trace, the same for a gap's stop as for a call's (predictor/tracing.py). */
	long bare_calls;
	int64_t bare_calls_signed_ns;
	/* Gaps after a timed call, where the process's recent call durations are known: how many,
	 * their sum, and the sum of the median of those durations at each.  A bare gap under
	 * strace here takes about as long as a bare call plus a constant of the machine, whatever
	 * speed tracing runs at just then, so the gaps' work is their sum less the medians' less
	 * that constant per gap (predictor/tracing.py).  other_gaps_signed_ns: every other gap's
	 * signed distance from its median, as user_signed_ns sums it for all of them. */
	long timed_gaps;
	int64_t timed_gaps_ns, timed_gaps_call_median_ns, other_gaps_signed_ns;
	/* The same gaps, each less its median call, by size: its middle is what tracing cost a
	 * bare gap in this trace, whatever the speed of the day (predictor/tracing.py). */
	long timed_gaps_over_call[TIMELINE_OVER_BINS];
	/* Of those gaps, the ones right after a call that mapped a file: how many, and the sum of
	 * each less its median call.  A program that maps a file reads it there, through page
	 * faults no call shows, and the cost model prices that read as the mapping's
	 * (characterizer/mapped.py), so the rule counts it once (predictor/predict.py). */
	long mapped_gaps;
	int64_t mapped_gaps_over_call_ns;
	/* Gaps after a call of unknown duration (a log without -T, where a gap runs from one
	 * call's start to the next's): their signed distance from their median capped at each of
	 * UNTIMED_CAPS_NS, summed.  What tracing costs such a gap at its slowest depends on the
	 * machine and the day, so the rule picks the cap from the tracing calibration
	 * (predictor/tracing.py) rather than the parser fixing one. */
	int64_t untimed_signed_ns[TIMELINE_UNTIMED_CAPS];
	/* How many gaps after a call of unknown duration there were; and of those, the ones from
	 * one bare call to the next (fstat then lseek; neither a lock taken, whose gaps scatter as
	 * the work it guards does: timeline.c's leans_as_tracing), each one's signed distance
	 * from the median of the trace's last TIMELINE_WINDOW gaps between the same two kinds of
	 * call (`bare_pairs`, any process's, so that short-lived processes have a median too),
	 * summed, while that median is no longer than a bare gap at its slowest.
	 * Such a gap is a bare call and its return to the program, tracing's two stops and little
	 * work, so their mean distance from their median is how far tracing's cost leans above
	 * its median in a log without -T, as bare_calls_signed_ns tells it in a log with it
	 * (predictor/tracing.py).  A pair whose median is longer holds the program's work (xz
	 * compresses between two sigprocmasks, some blocks long and some short), and its gaps
	 * scatter as that work does, not as tracing does. */
	long untimed_gaps, untimed_bare_gaps;
	int64_t untimed_bare_gaps_signed_ns;
	struct pair_windows bare_pairs;
	/* Every gap from one bare call to the next, locks' too, by length: their median is what
	 * tracing cost a gap from one call's start to the next's while this trace was made, a
	 * call's own time and work aside, where a calibration's loop tells it of another hour
	 * (Timeline.untimed_bare_gap_ns). */
	long untimed_bare_gap_us[TIMELINE_BARE_BINS];
	/* Of the gaps after a call of unknown duration, those after an fsync, fdatasync or
	 * sync_file_range: how many, their length, and their signed distance from their median as
	 * user_signed_ns sums it.  Such a gap holds the flush's wait for the device as the traced
	 * device did it just then, and the little the program does before its next call:
	 * untimed_signed_ns leaves it out, the rule takes the signed sum off user_signed_ns
	 * likewise, and the flushes' time is the cost model's alone (fsbm/documents.py's
	 * Timeline.untimed_outside_ns, predictor/predict.py). */
	long untimed_sync_gaps;
	int64_t untimed_sync_gaps_ns, untimed_sync_gaps_signed_ns;
	/* The file calls of each operation (TIMELINE_FILE_OPS), and of those the ones whose
	 * duration the log did not give: in a log without -T, a call the log split in two (another
	 * process wrote a line before it returned) shows its duration, and the gap after it starts
	 * at its end; every other call's time lies in the gap that follows its start.  The
	 * prediction takes the modelled time of only those off the gaps (predictor/predict.py). */
	long file_calls_by_op[TIMELINE_FILE_OPS], untimed_file_calls_by_op[TIMELINE_FILE_OPS];
	/* Of the gaps after a call of unknown duration, not after a flush, those after a file call
	 * of each operation: how many, and their process's median gap at each, capped at each of
	 * UNTIMED_CAPS_NS, summed.  What a gap's median holds above tracing's cost of a bare gap
	 * is a typical call's own time, which untimed_signed_ns has taken off already; the
	 * prediction takes off only the modelled time of the calls beyond it (Timeline.
	 * held_in_medians_ns, predictor/predict.py), or it would count their time twice. */
	long untimed_op_gaps[TIMELINE_FILE_OPS];
	int64_t untimed_held_ns[TIMELINE_FILE_OPS][TIMELINE_UNTIMED_CAPS];
	int64_t first_ns, last_ns;
};

/* A file call this much longer than its process's median call is long (file_calls_long_ns). */
#define TIMELINE_LONG_CALL_NS 1000000

/* The caps of untimed_signed_ns, in us: fsbm/documents.py's UNTIMED_CAPS_NS. */
#define TIMELINE_UNTIMED_CAPS_US 70, 100, 140, 200, 280, 400, 560, 800

void timeline_init(struct timeline *t);
void timeline_free(struct timeline *t);
/* What the timeline needs of a call beyond its times, read once from its name, arguments and
 * event (timeline_kind) and given to each reading of it. */
struct call_kind {
	int made_exec;    /* an execve that succeeded */
	int made_process; /* a clone, fork or vfork that returned a child */
	int blocking;     /* it waited for another process rather than worked */
	int bare;         /* which kind of bare call it is (timeline.c's bare_kind), 0 for none */
	int op;           /* its file operation's place in TIMELINE_OPERATIONS + 1; 0: not on a file */
	int mapped;       /* it mapped a file of a filesystem */
	int synced;       /* it flushed a file to the device */
};

/* The kind of call `c`: `file_op`, for a call on a file of a filesystem, which the cost model
 * prices, its event's operation ("read", "mmap"...); NULL for any other (a device, /proc or a
 * pipe, whose time is the program's own); `blocking`: it waited for another process. */
struct call_kind timeline_kind(const struct call *c, const char *file_op, int blocking);
/* One complete call of `pid` of kind `k` starting at ts_ns (NO_VALUE when the log has no
 * times), lasting dur_ns (-T; -1 where the log does not give it); `resumed_ns`: for a call the
 * log split in two, the time from its start to its resumption (what a log without -T shows of
 * its duration), NO_VALUE otherwise. */
void timeline_call(struct timeline *t, long pid, int64_t ts_ns, int64_t dur_ns, int64_t resumed_ns,
		   const struct call_kind *k);
/* Is a call of this name one that waits for another process whatever its arguments? */
int timeline_waits(const struct call *c);
/* The totals as one JSON object (no trailing newline); with `untimed` (the same calls with their
 * durations left out), its totals too, as the object's "untimed". */
void timeline_json(const struct timeline *t, const struct timeline *untimed, FILE *f);

#endif
