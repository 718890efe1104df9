/*
 * sequence.c - consecutive and sequential accesses, and Ellard's runs, in one pass over
 * the events in time order (sequentiality.py says what each term means).
 *
 * Why C: the statistic is a state machine per (actor, file) - where the last read and the
 * last write ended, which run is open - and a hash table of those states makes it one
 * linear pass, where the vectorized form needed a sort of every access by (actor, file).
 *
 * For each event i (in the given order):
 *   an open or create of (actor, file) resets both directions' last end to 0 and closes
 *   the group's run;
 *   a read or write with a known offset that did not fail is an access: consecutive if its
 *   offset equals the last end in its direction, sequential if at or past it; the end
 *   becomes offset + length.  It joins the group's run, or opens a new one when none is
 *   open or (NFS) the group was idle longer than gap_ns.
 * An access is interleaved when its actor made other costed calls (`costed`: the
 * operations a cost table prices) since the previous access of its run: readahead works
 * while they run (classes.py says why the predictor asks).  A consecutive access resumes a
 * stream when the previous access its way since the open was not consecutive: it follows a
 * read that skipped ahead or back, not a run of reads that readahead may have grown along.
 * Output per access, in processing order: the event's index, flags (1 consecutive, 2
 * sequential, 8 interleaved, 16 resumes), and its gap: offset less the last end in its
 * direction (negative for a step back).  The runs are counted as they close (struct runs),
 * and per file the pass keeps the furthest any access ended (its size as the trace shows
 * it) and its whole-file runs.
 */
#include <stdint.h>
#include <stdlib.h>

#include "access_flags.h"
#include "events.h"

/* How many events ahead a group's state is fetched: a table of a million groups is out of
 * cache, and the pass would otherwise wait on every event's state in turn. */
#define PREFETCH_AHEAD 16

struct group {
	int64_t key;       /* -1: empty slot */
	int64_t end[2];    /* where the last read, the last write ended */
	uint8_t gapped[2]; /* whether the last read, the last write since the open was not consecutive */
	uint8_t streamed[2]; /* whether the last read, the last write skipped at most STREAM_GAP_BYTES */
	uint8_t run;       /* the open run's RUN_ bits; 0: no run open */
	int64_t last_clock;
	int64_t run_end;   /* where the open run's last access ended */
	int64_t calls_then; /* the actor's costed calls up to its last access, that one included */
};

enum { RUN_OPEN = 1, RUN_READS = 2, RUN_WRITES = 4, RUN_BROKEN = 8 }; /* RUN_BROKEN: an access not consecutive */

/*
 * Ellard's runs as they close: counts[] of RUNS_ (all, all consecutive, read-only,
 * write-only, read-write), and per file the furthest any access ended (its size as the
 * trace shows it) and, for whole-file runs, the furthest end an all-consecutive run reached
 * and how many reached it.  A run that reaches its file's final size reaches the furthest
 * end of all, so those are the file's whole-file runs.
 */
enum { RUNS_ALL, RUNS_CONSECUTIVE, RUNS_READ_ONLY, RUNS_WRITE_ONLY, RUNS_READ_WRITE, RUNS_COUNTS };

struct runs {
	int64_t *counts;
	int64_t *file_size;
	int64_t *best_end;   /* -1: no all-consecutive run yet */
	int64_t *best_count; /* the all-consecutive runs that reached best_end */
};

static void close_run(struct runs *r, struct group *g, int64_t file)
{
	if (!(g->run & RUN_OPEN))
		return;
	int reads = (g->run & RUN_READS) != 0, writes = (g->run & RUN_WRITES) != 0;

	r->counts[RUNS_ALL]++;
	r->counts[RUNS_READ_ONLY] += !writes;
	r->counts[RUNS_WRITE_ONLY] += !reads;
	r->counts[RUNS_READ_WRITE] += reads && writes;
	if (!(g->run & RUN_BROKEN)) {
		r->counts[RUNS_CONSECUTIVE]++;
		if (g->run_end > r->best_end[file]) {
			r->best_end[file] = g->run_end;
			r->best_count[file] = 1;
		} else if (g->run_end == r->best_end[file]) {
			r->best_count[file]++;
		}
	}
	g->run = 0;
}

/* Group states: indexed directly by key when the key range is small (no hashing, no
 * probing), else an open-addressing hash table that grows. */
struct table {
	struct group *slots;
	uint64_t mask;
	uint64_t used;
	int dense;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int table_init(struct table *t, uint64_t capacity, int dense)
{
	t->slots = malloc(capacity * sizeof(*t->slots));
	if (!t->slots)
		return -1;
	for (uint64_t i = 0; i < capacity; i++)
		t->slots[i] = (struct group){ .key = dense ? (int64_t)i : -1, .end = { 0, 0 }, .gapped = { 0, 0 },
					      .streamed = { 0, 0 }, .run = 0, .last_clock = MISSING, .run_end = 0,
					      .calls_then = 0 };
	t->mask = capacity - 1;
	t->used = 0;
	t->dense = dense;
	return 0;
}

static struct group *find(struct table *t, int64_t key);

static int grow(struct table *t)
{
	struct table bigger;
	uint64_t old_capacity = t->mask + 1;

	if (table_init(&bigger, 2 * old_capacity, 0) != 0)
		return -1;
	for (uint64_t i = 0; i < old_capacity; i++) {
		if (t->slots[i].key < 0)
			continue;
		struct group *g = find(&bigger, t->slots[i].key);
		*g = t->slots[i];
	}
	free(t->slots);
	*t = bigger;
	return 0;
}

/* The group's slot, claimed (fresh state) if the key is new.  NULL when out of memory. */
static struct group *find(struct table *t, int64_t key)
{
	if (t->dense)
		return &t->slots[key];
	uint64_t i = mix((uint64_t)key) & t->mask;

	while (t->slots[i].key >= 0 && t->slots[i].key != key)
		i = (i + 1) & t->mask;
	if (t->slots[i].key < 0) {
		if (2 * (t->used + 1) > t->mask + 1) {
			if (grow(t) != 0)
				return NULL;
			return find(t, key);
		}
		t->slots[i].key = key;
		t->used++;
	}
	return &t->slots[i];
}

/*
 * Returns the number of accesses written (the per-access arrays hold n entries), or -1 when
 * out of memory.  Zeroed by the caller and filled: run_counts (RUNS_COUNTS entries, the
 * runs as close_run counts them), file_size (n_files), and directions[3 * d] the accesses
 * of direction d (0 read, 1 write), [3 * d + 1] the consecutive ones and [3 * d + 2] the
 * sequential ones.  entire[f] gets file f's whole-file runs.  order may be NULL (events
 * already in time order).
 */
int64_t fsbm_sequence(int64_t n, const int64_t *order, const int8_t *op, const uint8_t *failed,
		      const uint8_t *costed, const int32_t *actor, const int32_t *file, int64_t n_files,
		      const int64_t *offset, const int64_t *size, const int64_t *ret, const int64_t *clock, int8_t op_read,
		      int8_t op_write, int8_t op_open, int8_t op_create, int64_t gap_ns, int64_t *acc_index,
		      uint8_t *acc_flags, int64_t *acc_gap, int64_t *run_counts, int64_t *file_size, int64_t *entire,
		      int64_t *directions)
{
	struct table t = { 0 };
	struct runs r = { .counts = run_counts, .file_size = file_size };
	int64_t accesses = 0, actors = 0, *calls;
	uint64_t range, capacity = 1024;

	if (n == 0)
		return 0;
	for (int64_t i = 0; i < n; i++)
		if (actor[i] >= actors)
			actors = actor[i] + 1;
	calls = calloc((size_t)actors, sizeof(*calls)); /* costed calls so far, per actor */
	r.best_end = malloc((size_t)n_files * sizeof(*r.best_end));
	r.best_count = calloc((size_t)n_files, sizeof(*r.best_count));
	if (!calls || !r.best_end || !r.best_count) {
		accesses = -1;
		goto done;
	}
	for (int64_t f = 0; f < n_files; f++)
		r.best_end[f] = -1;
	range = (uint64_t)actors * (uint64_t)n_files;
	while (capacity < 2 * (range < (uint64_t)n ? range : (uint64_t)n))
		capacity *= 2;
	if (table_init(&t, range <= 4 * (uint64_t)n + 1024 && range <= (1ULL << 26) ? range : capacity,
		       range <= 4 * (uint64_t)n + 1024 && range <= (1ULL << 26)) != 0) {
		accesses = -1;
		goto done;
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t i = order ? order[k] : k;
		int8_t o = op[i];

		if (t.dense && k + PREFETCH_AHEAD < n) {
			int64_t ahead = order ? order[k + PREFETCH_AHEAD] : k + PREFETCH_AHEAD;

			__builtin_prefetch(&t.slots[(int64_t)actor[ahead] * n_files + file[ahead]], 1);
		}
		int is_open = o == op_open || o == op_create;
		int is_access = (o == op_read || o == op_write) && offset[i] != MISSING && !failed[i];
		int64_t calls_before = calls[actor[i]];

		calls[actor[i]] += costed[i] != 0;
		if (!is_open && !is_access)
			continue;
		struct group *g = find(&t, (int64_t)actor[i] * n_files + file[i]);
		if (!g) {
			accesses = -1;
			goto done;
		}
		int idle = gap_ns > 0 && g->last_clock != MISSING && clock[i] - g->last_clock > gap_ns;
		g->last_clock = clock[i];
		if (is_open || idle) { /* the run ends here; an open also starts both directions at 0 */
			close_run(&r, g, file[i]);
			if (is_open) {
				g->end[0] = g->end[1] = 0;
				g->gapped[0] = g->gapped[1] = 0;
				g->streamed[0] = g->streamed[1] = 0;
				continue;
			}
		}
		int direction = o == op_write;
		int64_t length = access_length(size[i], ret[i]);
		int consecutive = offset[i] == g->end[direction];
		uint8_t flags = (consecutive ? CONSECUTIVE : 0) |
				(offset[i] >= g->end[direction] ? SEQUENTIAL : 0) |
				(g->run && calls_before > g->calls_then ? INTERLEAVED : 0) |
				(consecutive && g->gapped[direction] ? RESUMES : 0) |
				(g->streamed[direction] ? IN_STREAM : 0);
		g->gapped[direction] = !consecutive;
		g->streamed[direction] = offset[i] >= g->end[direction] && offset[i] - g->end[direction] <= STREAM_GAP_BYTES;
		g->run |= RUN_OPEN | (direction ? RUN_WRITES : RUN_READS) | (consecutive ? 0 : RUN_BROKEN);
		acc_gap[accesses] = offset[i] - g->end[direction];
		g->end[direction] = offset[i] + length;
		g->calls_then = calls[actor[i]];
		acc_index[accesses] = i;
		acc_flags[accesses] = flags;
		g->run_end = g->end[direction];
		if (g->end[direction] > file_size[file[i]])
			file_size[file[i]] = g->end[direction];
		directions[3 * direction] += 1;
		directions[3 * direction + 1] += consecutive;
		directions[3 * direction + 2] += (flags & SEQUENTIAL) != 0;
		accesses++;
	}
	for (uint64_t s = 0; s <= t.mask; s++) /* the runs still open at the end */
		if (t.slots[s].key >= 0)
			close_run(&r, &t.slots[s], t.slots[s].key % n_files);
	for (int64_t f = 0; f < n_files; f++)
		entire[f] = r.best_end[f] == file_size[f] ? r.best_count[f] : 0;
done:
	free(t.slots);
	free(calls);
	free(r.best_end);
	free(r.best_count);
	return accesses;
}
