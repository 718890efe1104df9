/*
 * timeline.c - per-process lifetimes and call counts of a traced job (timeline.h).  The
 * lifetimes live in an open-addressing table keyed by pid; a reused pid extends the
 * lifetime it had, which a job short enough to trace rarely sees.
 *
 * What tracing costs a call is not one number: here it switches between two speeds (gaps
 * of about 18 us or about 52 us between back-to-back calls), within one trace too.  So the
 * work in a gap is its excess over the median of the process's last TIMELINE_WINDOW gaps,
 * and a call's own time its excess over the median of its last TIMELINE_WINDOW durations:
 * the median follows the speed of the moment, and most gaps between calls hold little work.
 * Where every gap holds work (gzip compressing between its reads), the median is that work,
 * not tracing's: so the median counts for no more than BARE_GAP_CAP_NS, the slowest speed
 * a bare gap was seen at here (the calibration programs' back-to-back calls: 45-63 us), and
 * a bare call's duration no more than that either (43-51 us for a getppid under -f), or than
 * the median of the process's last bare calls where tracing runs slower than that (80 us a
 * close on some hosts): a median capped below the bare calls' own speed would count their
 * tracing cost as work (call_cap).
 *
 * Both sums are kept: the excess above the median, and the signed distance from it.  The
 * first counts the upper half of tracing's own scatter as work; in the second the scatter
 * below the median cancels it (predictor/tracing.py takes the second).
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "timeline.h"

/* A name and its length, so that most names are told apart by their length alone. */
struct name {
	const char *text;
	size_t len;
};
#define NAME(s) { s, sizeof(s) - 1 }

/* Calls that block until another process acts: time spent in them is that process's. */
static const struct name WAITING[] = {
	NAME("wait4"), NAME("waitid"), NAME("waitpid"), NAME("select"), NAME("pselect6"), NAME("poll"),
	NAME("ppoll"), NAME("epoll_wait"), NAME("epoll_pwait"), NAME("epoll_pwait2"), NAME("futex"),
	NAME("pause"), NAME("rt_sigsuspend"), NAME("rt_sigtimedwait"), NAME("sigsuspend"), NAME("accept"),
	NAME("accept4"),
};

/* Calls that do a little work in the kernel and never wait, on a file or not: under tracing
 * each one's duration is tracing's stop and little else, so how far they lie above their
 * process's median call, on average, is the scatter of tracing's cost in this trace
 * (bare_calls_signed_ns).  Calls that look up a path or touch memory maps can wait for the
 * device or do real work, and are not among them. */
static const struct name BARE[] = {
	NAME("close"), NAME("fstat"), NAME("lseek"), NAME("getpid"), NAME("getppid"),
	NAME("gettid"), NAME("getuid"), NAME("geteuid"), NAME("getgid"), NAME("getegid"),
	NAME("rt_sigaction"), NAME("rt_sigprocmask"), NAME("dup"), NAME("dup2"), NAME("dup3"),
	NAME("umask"), NAME("getcwd"), NAME("uname"), NAME("sysinfo"), NAME("arch_prctl"),
	NAME("set_tid_address"), NAME("set_robust_list"), NAME("rseq"), NAME("prlimit64"),
	NAME("getrandom"), NAME("getrusage"), NAME("times"),
};

/* fcntl, bare where its command does not wait (bare_kind). */
static const struct name FCNTL[] = { NAME("fcntl"), NAME("fcntl64") };

enum { BARE_GAP_CAP_NS = 70000 };
/* A gap from one call's start to the next's (a log without -T) at its slowest with no work in
 * it: a bare gap's and a bare call's. */
enum { BARE_START_CAP_NS = 2 * BARE_GAP_CAP_NS };
static const int64_t UNTIMED_CAPS_US[TIMELINE_UNTIMED_CAPS] = { TIMELINE_UNTIMED_CAPS_US };
static const char *const OPERATIONS[TIMELINE_FILE_OPS] = { TIMELINE_OPERATIONS };

/* The place of a file call's operation in OPERATIONS; "other" for a name not among them. */
static int operation_index(const char *op)
{
	for (int k = 0; k < TIMELINE_FILE_OPS; k++)
		if (strcmp(op, OPERATIONS[k]) == 0)
			return k;
	return TIMELINE_FILE_OPS - 1;
}

void timeline_init(struct timeline *t)
{
	memset(t, 0, sizeof(*t));
	t->first_ns = NO_VALUE;
	t->last_ns = NO_VALUE;
}

void timeline_free(struct timeline *t)
{
	free(t->bare_pairs.at);
	free(t->slot);
	t->slot = NULL;
}

/* Where `value` goes in the first m sorted values (the first place not below it). */
static long place_of(const int64_t *sorted, long m, int64_t value)
{
	long lo = 0, hi = m;

	while (lo < hi) {
		long mid = (lo + hi) / 2;

		if (sorted[mid] < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Push `value` into a window: it takes the oldest value's place in the ring, and in the sorted
 * copy it takes the oldest's place and slides to its own, past the values between the two
 * (few, where a series' values are alike), so its median is read, not searched for. */
static void window_push(struct window *w, int64_t value)
{
	long m = w->n < TIMELINE_WINDOW ? w->n : TIMELINE_WINDOW, at;

	if (w->n >= TIMELINE_WINDOW) { /* the oldest leaves */
		at = place_of(w->sorted, m, w->ring[w->n % TIMELINE_WINDOW]);
		for (; at + 1 < m && w->sorted[at + 1] < value; at++)
			w->sorted[at] = w->sorted[at + 1];
		for (; at > 0 && w->sorted[at - 1] > value; at--)
			w->sorted[at] = w->sorted[at - 1];
	} else {
		at = place_of(w->sorted, m, value);
		memmove(w->sorted + at + 1, w->sorted + at, (size_t)(m - at) * sizeof(w->sorted[0]));
	}
	w->sorted[at] = value;
	w->ring[w->n % TIMELINE_WINDOW] = value;
	w->n++;
}

/* The median of a window that holds at least one value: the (m / 2)-th smallest of its m. */
static int64_t window_median(const struct window *w)
{
	return w->sorted[(w->n < TIMELINE_WINDOW ? w->n : TIMELINE_WINDOW) / 2];
}

/* The median of a window, counted for no more than `cap`: tracing's cost of a bare gap or
 * call at its slowest. */
static int64_t capped_median(const struct window *w, int64_t cap)
{
	int64_t median = window_median(w);

	return median < cap ? median : cap;
}

/* The median call a gap after a timed call is measured against.  A window of one or two
 * calls has the larger as its median, and a process's first call is the execve that loaded
 * it (10 ms cold): that median counts for no more than a bare call at its slowest. */
static int64_t call_median(const struct window *w)
{
	return w->n < 3 ? capped_median(w, BARE_GAP_CAP_NS) : window_median(w);
}

/* The most a process's median call counts for when a call is measured against it: a bare
 * call at its slowest, BARE_GAP_CAP_NS, or the median of the process's last bare calls where
 * those take longer under tracing just then. */
static int64_t call_cap(const struct lifetime *l)
{
	int64_t bare = l->bare.n >= 3 ? window_median(&l->bare) : 0;

	return bare > BARE_GAP_CAP_NS ? bare : BARE_GAP_CAP_NS;
}

/* Push `value` into a window; how far it stands from the window's median (counted for no
 * more than `cap`): above it, never below 0, in `*above`; signed, in the return value.  The
 * median of m values is the (m / 2)-th smallest. */
static int64_t from_median(struct window *w, int64_t value, int64_t cap, int64_t *above)
{
	int64_t median;

	window_push(w, value);
	median = capped_median(w, cap);
	*above = value > median ? value - median : 0;
	return value - median;
}

/* The bin of untimed_bare_gap_us that a gap of `gap` ns falls in. */
static int bare_gap_bin(int64_t gap)
{
	int64_t bin = gap / 1000;

	return bin < TIMELINE_BARE_BINS ? (int)bin : TIMELINE_BARE_BINS - 1;
}

/* The bin of timed_gaps_over_call that a gap `over` longer than its median call falls in. */
static int over_call_bin(int64_t over)
{
	int64_t bin = (over - TIMELINE_OVER_LOW_NS) / TIMELINE_OVER_BIN_NS;

	if (over < TIMELINE_OVER_LOW_NS)
		return 0;
	return bin < TIMELINE_OVER_BINS ? (int)bin : TIMELINE_OVER_BINS - 1;
}

static struct lifetime *find(struct lifetime *slot, size_t cap, long pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (cap - 1);

	while (slot[i].pid && slot[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static void out_of_memory(void)
{
	fputs("strace2events: out of memory\n", stderr);
	exit(1);
}

static void grow(struct timeline *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	struct lifetime *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		out_of_memory();
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].pid)
			*find(slot, cap, t->slot[i].pid) = t->slot[i];
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
}

/* Where `name` is among the `n` names of `table`: its place from 1, or 0 for none. */
static int place_in(struct span name, const struct name *table, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (name.len == table[i].len && memcmp(name.p, table[i].text, name.len) == 0)
			return (int)i + 1;
	return 0;
}

/* Is `name` one of the `n` names of `table`? */
static int named_in(struct span name, const struct name *table, size_t n)
{
	return place_in(name, table, n) != 0;
}

enum { NBARE = sizeof(BARE) / sizeof(BARE[0]), FCNTL_FLAGS = NBARE + 1, FCNTL_LOCK = NBARE + 2 };

/* Which kind of bare call `c` is, from 1: one of BARE, or an fcntl that does not wait, after
 * them: flags read or set (FCNTL_FLAGS), or a lock taken or tested without waiting for it
 * (FCNTL_LOCK: F_SETLK, F_GETLK, their OFD forms); 0 for a call that is not bare.  F_SETLKW,
 * F_SETLKW64 and F_OFD_SETLKW, which wait for another process's lock, are not bare. */
static int bare_kind(const struct call *c)
{
	if (named_in(c->name, FCNTL, sizeof(FCNTL) / sizeof(FCNTL[0]))) {
		if (c->nargs < 2 || c->arg[1].len == 0 || span_has(c->arg[1], "LKW"))
			return 0;
		return span_has(c->arg[1], "LK") ? FCNTL_LOCK : FCNTL_FLAGS;
	}
	return place_in(c->name, BARE, NBARE);
}

/* Does the scatter of gaps from a bare call of kind `from` to one of kind `to` tell how far
 * tracing's cost leans?  Not where either is a lock: a program takes a lock to do the work it
 * guards between that fcntl and the next (a database's pages read and written), so those
 * gaps scatter as that work does.  (Their median still counts among the bare gaps' lengths:
 * most of a program's locks come back to back, tracing's cost alone between them.) */
static int leans_as_tracing(int from, int to)
{
	return from != FCNTL_LOCK && to != FCNTL_LOCK;
}

/* The window of gaps from a bare call of kind `from` to one of kind `to` among `pairs`, made
 * empty the first time that pair is seen.  A trace makes few such pairs (a dozen in a
 * compile), so they are searched in turn. */
static struct window *pair_gaps(struct pair_windows *pairs, int from, int to)
{
	int key = from * 64 + to;

	for (int i = 0; i < pairs->n; i++)
		if (pairs->at[i].key == key)
			return &pairs->at[i].gaps;
	if (pairs->n == pairs->cap) {
		int cap = pairs->cap ? 2 * pairs->cap : 8;
		struct pair_window *at = realloc(pairs->at, (size_t)cap * sizeof(*at));

		if (!at)
			out_of_memory();
		pairs->at = at;
		pairs->cap = cap;
	}
	memset(&pairs->at[pairs->n], 0, sizeof(pairs->at[0]));
	pairs->at[pairs->n].key = key;
	return &pairs->at[pairs->n++].gaps;
}

int timeline_waits(const struct call *c)
{
	return named_in(c->name, WAITING, sizeof(WAITING) / sizeof(WAITING[0]));
}

struct call_kind timeline_kind(const struct call *c, const char *file_op, int blocking)
{
	struct call_kind k = { 0 };

	if (span_eq(c->name, "execve") || span_eq(c->name, "execveat"))
		k.made_exec = c->ret_known && c->ret == 0;
	if (span_eq(c->name, "clone") || span_eq(c->name, "clone3") || span_eq(c->name, "fork") ||
	    span_eq(c->name, "vfork"))
		k.made_process = c->ret_known && c->ret > 0;
	k.blocking = blocking;
	k.bare = bare_kind(c);
	if (file_op) {
		k.op = operation_index(file_op) + 1;
		k.mapped = strcmp(file_op, "mmap") == 0 && c->ret_known && !c->err[0];
		k.synced = strcmp(file_op, "fsync") == 0;
	}
	return k;
}

void timeline_call(struct timeline *t, long pid, int64_t ts_ns, int64_t dur_ns, int64_t resumed_ns,
		   const struct call_kind *k)
{
	struct lifetime *l;
	int64_t end, dur = dur_ns >= 0 ? dur_ns : resumed_ns;
	int bare = k->bare, blocking = k->blocking;

	t->calls++;
	t->execs += k->made_exec;
	t->forks += k->made_process;
	if (dur_ns >= 0)
		t->timed_calls++;
	/* A call the log split in two says how long it took even without -T: a wait4 or a
	 * pipe read that blocked while other processes ran is the one that matters here. */
	if (dur >= 0 && blocking) {
		t->blocking_calls++;
		t->blocked_ns += dur;
		if (dur_ns < 0)
			t->untimed_blocked_ns += dur;
	}
	if (k->op) {
		t->file_calls_by_op[k->op - 1]++;
		t->untimed_file_calls_by_op[k->op - 1] += dur < 0;
	}
	if (ts_ns == NO_VALUE)
		return;
	end = ts_ns + (dur > 0 ? dur : 0);
	if (t->first_ns == NO_VALUE || ts_ns < t->first_ns)
		t->first_ns = ts_ns;
	if (t->last_ns == NO_VALUE || end > t->last_ns)
		t->last_ns = end;
	if ((t->count + 1) * 2 > t->cap)
		grow(t);
	l = find(t->slot, t->cap, pid);
	if (!l->pid) {
		l->pid = pid;
		l->first_ns = ts_ns;
		l->last_ns = end;
		l->prev_end_ns = NO_VALUE;
		t->count++;
	}
	if (ts_ns < l->first_ns)
		l->first_ns = ts_ns;
	if (end > l->last_ns)
		l->last_ns = end;
	/* The work before a call is the process's own, whether the call then blocks or not.
	 * Without -T the gap runs from the previous call's start and holds that call too: its
	 * bare cost is a bare gap's and a bare call's, each at its slowest, and it is measured
	 * against the process's last such gaps (`starts`).  A call the log split in two shows its
	 * end even without -T, and the gap after it is measured against the last gaps that ran
	 * from a call's end (`gaps`), as in a log with -T: in a job of processes at once, where
	 * the log splits most calls, those gaps also hold the tracer's serving the others, and
	 * the gaps from a call's start would be the wrong yardstick for them. */
	if (l->prev_end_ns != NO_VALUE && ts_ns >= l->prev_end_ns) {
		int64_t above, gap = ts_ns - l->prev_end_ns, signed_gap;

		signed_gap = l->prev_timed ? from_median(&l->gaps, gap, BARE_GAP_CAP_NS, &above)
					   : from_median(&l->starts, gap, BARE_START_CAP_NS, &above);
		t->user_signed_ns += signed_gap;
		t->user_ns += above;
		if (dur_ns >= 0 && l->prev_timed && l->durs.n > 0) {
			int64_t call = call_median(&l->durs);

			t->timed_gaps++;
			t->timed_gaps_ns += gap;
			t->timed_gaps_call_median_ns += call;
			t->timed_gaps_over_call[over_call_bin(gap - call)]++;
			if (l->prev_mapped) {
				t->mapped_gaps++;
				t->mapped_gaps_over_call_ns += gap - call;
			}
		} else {
			t->other_gaps_signed_ns += signed_gap;
		}
		if (!l->prev_timed) {
			int64_t median = window_median(&l->starts), lean_above;

			t->untimed_gaps++;
			if (l->prev_bare && bare) {
				t->untimed_bare_gap_us[bare_gap_bin(gap)]++;
				if (leans_as_tracing(l->prev_bare, bare)) {
					struct window *pair = pair_gaps(&t->bare_pairs, l->prev_bare, bare);
					int64_t lean = from_median(pair, gap, INT64_MAX, &lean_above);

					if (window_median(pair) <= BARE_START_CAP_NS) {
						t->untimed_bare_gaps++;
						t->untimed_bare_gaps_signed_ns += lean;
					}
				}
			}
			if (l->prev_synced) { /* the flush's time: the cost model's (timeline.h) */
				t->untimed_sync_gaps++;
				t->untimed_sync_gaps_ns += gap;
				t->untimed_sync_gaps_signed_ns += signed_gap;
			} else {
				int op = l->prev_op - 1;

				if (op >= 0)
					t->untimed_op_gaps[op]++;
				for (int c = 0; c < TIMELINE_UNTIMED_CAPS; c++) {
					int64_t cap = UNTIMED_CAPS_US[c] * 1000, held = median < cap ? median : cap;

					t->untimed_signed_ns[c] += gap - held;
					if (op >= 0)
						t->untimed_held_ns[op][c] += held;
				}
			}
		}
	}
	if (!blocking && dur_ns >= 0) {
		int64_t excess, signed_excess;

		if (bare)
			window_push(&l->bare, dur_ns);
		signed_excess = from_median(&l->durs, dur_ns, call_cap(l), &excess);
		if (bare) {
			t->bare_calls++;
			t->bare_calls_signed_ns += signed_excess;
		}
		if (k->op) {
			t->file_calls_excess_ns += excess;
			t->file_calls_signed_ns += signed_excess;
			if (signed_excess >= TIMELINE_LONG_CALL_NS && !k->synced)
				t->file_calls_long_ns += signed_excess;
		} else {
			t->calls_excess_ns += excess;
			t->calls_signed_ns += signed_excess;
			t->other_calls++;
		}
	}
	l->prev_end_ns = end;
	l->prev_timed = dur >= 0;
	l->prev_bare = bare;
	l->prev_mapped = k->mapped;
	l->prev_synced = k->synced;
	l->prev_op = k->op;
}

void timeline_json(const struct timeline *t, const struct timeline *untimed, FILE *f)
{
	int64_t lifetimes = 0;

	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].pid)
			lifetimes += t->slot[i].last_ns - t->slot[i].first_ns;
	fprintf(f, "{\"processes\":%zu,\"calls\":%ld,\"timed_calls\":%ld,\"blocking_calls\":%ld,\"execs\":%ld,"
		"\"forks\":%ld,\"blocked_ns\":%lld,\"lifetimes_ns\":%lld,\"span_ns\":%lld,\"user_ns\":%lld,"
		"\"calls_excess_ns\":%lld,\"file_calls_excess_ns\":%lld,\"untimed_blocked_ns\":%lld,"
		"\"user_signed_ns\":%lld,\"calls_signed_ns\":%lld,\"file_calls_signed_ns\":%lld,\"file_calls_long_ns\":%lld,"
		"\"other_calls\":%ld,"
		"\"timed_gaps\":%ld,\"timed_gaps_ns\":%lld,\"timed_gaps_call_median_ns\":%lld,"
		"\"other_gaps_signed_ns\":%lld,\"bare_calls\":%ld,\"bare_calls_signed_ns\":%lld,\"mapped_gaps\":%ld,"
		"\"mapped_gaps_over_call_ns\":%lld,\"untimed_gaps\":%ld,\"untimed_bare_gaps\":%ld,"
		"\"untimed_bare_gaps_signed_ns\":%lld,\"untimed_sync_gaps\":%ld,\"untimed_sync_gaps_ns\":%lld,"
		"\"untimed_sync_gaps_signed_ns\":%lld,\"first_ns\":%lld,\"last_ns\":%lld,\"untimed_signed_by_cap_ns\":[",
		t->count, t->calls, t->timed_calls, t->blocking_calls, t->execs, t->forks,
		(long long)t->blocked_ns, (long long)lifetimes,
		(long long)(t->first_ns == NO_VALUE ? 0 : t->last_ns - t->first_ns), (long long)t->user_ns,
		(long long)t->calls_excess_ns, (long long)t->file_calls_excess_ns, (long long)t->untimed_blocked_ns,
		(long long)t->user_signed_ns, (long long)t->calls_signed_ns, (long long)t->file_calls_signed_ns,
		(long long)t->file_calls_long_ns, t->other_calls, t->timed_gaps, (long long)t->timed_gaps_ns, (long long)t->timed_gaps_call_median_ns,
		(long long)t->other_gaps_signed_ns, t->bare_calls, (long long)t->bare_calls_signed_ns, t->mapped_gaps,
		(long long)t->mapped_gaps_over_call_ns, t->untimed_gaps, t->untimed_bare_gaps,
		(long long)t->untimed_bare_gaps_signed_ns, t->untimed_sync_gaps, (long long)t->untimed_sync_gaps_ns,
		(long long)t->untimed_sync_gaps_signed_ns,
		(long long)(t->first_ns == NO_VALUE ? 0 : t->first_ns), (long long)(t->first_ns == NO_VALUE ? 0 : t->last_ns));
	for (int k = 0; k < TIMELINE_UNTIMED_CAPS; k++)
		fprintf(f, "%s%lld", k ? "," : "", (long long)t->untimed_signed_ns[k]);
	fputs("],\"timed_gaps_over_call\":[", f);
	for (int k = 0; k < TIMELINE_OVER_BINS; k++)
		fprintf(f, "%s%ld", k ? "," : "", t->timed_gaps_over_call[k]);
	fputs("],\"untimed_bare_gap_us\":[", f);
	for (int k = 0; k < TIMELINE_BARE_BINS; k++)
		fprintf(f, "%s%ld", k ? "," : "", t->untimed_bare_gap_us[k]);
	fputs("],\"file_calls_by_op\":{", f);
	for (int k = 0, n = 0; k < TIMELINE_FILE_OPS; k++)
		if (t->file_calls_by_op[k])
			fprintf(f, "%s\"%s\":[%ld,%ld]", n++ ? "," : "", OPERATIONS[k], t->file_calls_by_op[k],
				t->untimed_file_calls_by_op[k]);
	fputs("},\"untimed_held_by_op\":{", f);
	for (int k = 0, n = 0; k < TIMELINE_FILE_OPS; k++) {
		if (!t->untimed_op_gaps[k])
			continue;
		fprintf(f, "%s\"%s\":[%ld", n++ ? "," : "", OPERATIONS[k], t->untimed_op_gaps[k]);
		for (int c = 0; c < TIMELINE_UNTIMED_CAPS; c++)
			fprintf(f, ",%lld", (long long)t->untimed_held_ns[k][c]);
		fputc(']', f);
	}
	fputc('}', f);
	if (untimed) {
		fputs(",\"untimed\":", f);
		timeline_json(untimed, NULL, f);
	}
	fputc('}', f);
}
