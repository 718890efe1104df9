/*
 * runner.c - the timing loop.  Every sample in fsbench is taken here, the same three
 * steps each time: read the clock, do exactly one operation, read the clock; the
 * timer's own cost is subtracted.  Untimed work (building trees, writing before an
 * fsync, closing after an open) happens in the descriptor's other callbacks.
 *
 * What the operations took of the processor, apart from their waits, is the thread's CPU
 * clock read when a repetition's timed operations begin and when they end, less the loop's
 * own work and the untimed callbacks' CPU.  Never around each operation: that clock is a
 * system call, and one just before a warm 4 KiB read or stat made it 100-200 ns slower
 * (0.82 -> 0.92 us, 1.95 -> 2.14 us), as the kernel entry and exit disturb the caches the
 * call then uses.  Callbacks are bracketed, where a descriptor has them; they already
 * put a system call beside the operation.
 */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "latency.h"


enum { MIN_TIMED_OPS = 8 };

const char *order_name(const struct bench_case *c)
{
	if (c->order == ORDER_FORWARD)
		return "forward";
	if (c->bench->family == FAMILY_META)
		return c->order == ORDER_SEQ ? "creation" : "random";
	return c->order == ORDER_SEQ ? "sequential" : "random";
}

/* "random", or "forward+65536" with the gap: the part of a label or a directory name
 * that tells one order from another. */
static void order_with_gap(const struct bench_case *c, char *buf, size_t len)
{
	if (c->order == ORDER_FORWARD)
		snprintf(buf, len, "forward+%llu", (unsigned long long)c->gap);
	else
		snprintf(buf, len, "%s", order_name(c));
}

void case_label(const struct bench_case *c, char *buf, size_t len)
{
	char order[48];

	order_with_gap(c, order, sizeof(order));
	if (c->bench->family == FAMILY_DATA)
		snprintf(buf, len, "%s %llu B %s %s", c->bench->name, (unsigned long long)c->size,
			 order, cache_mode_name(c->cache));
	else if (c->size)
		snprintf(buf, len, "%s %llu B %s-order %s", c->bench->name, (unsigned long long)c->size,
			 order_name(c), cache_mode_name(c->cache));
	else
		snprintf(buf, len, "%s %s-order %s", c->bench->name, order_name(c),
			 cache_mode_name(c->cache));
}

static void case_dir_name(const struct bench_case *c, char *buf, size_t len)
{
	char order[48];

	order_with_gap(c, order, sizeof(order));
	snprintf(buf, len, "%s.%llu.%s.%s", c->bench->name, (unsigned long long)c->size,
		 order, cache_mode_name(c->cache));
}

static int open_case_dir(const struct suite_config *cfg, const char *name)
{
	int fd;

	if (mkdirat(cfg->workdir_fd, name, 0755) != 0 && errno != EEXIST)
		return fail_errno("mkdirat", name);
	fd = openat(cfg->workdir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? fail_errno("openat", name) : fd;
}

static size_t warmup_ops(const struct suite_config *cfg, size_t n)
{
	size_t w = cfg->warmup >= 0 ? (size_t)cfg->warmup : n / 20;

	if (cfg->warmup < 0 && w < 1)
		w = 1;
	if (w >= n)
		w = n / 2;
	return w;
}

/* A case's random orders follow from what it measures (FNV-1a of its label), not from its
 * place in the plan: `--only read` reads the same offsets as the whole suite, and so does
 * every filesystem. */
static uint64_t case_seed(const struct bench_case *c)
{
	char label[160];
	uint64_t hash = 0xcbf29ce484222325ULL;

	case_label(c, label, sizeof(label));
	for (const char *p = label; *p; p++)
		hash = (hash ^ (unsigned char)*p) * 0x100000001b3ULL;
	return hash;
}

struct case_samples {
	struct latency timed, warm;
	double cpu_sum_ns;  /* CPU time of the timed operations */
	struct gap_latency by_gap; /* forward order only */
	double *rep_means;
	size_t *rep_ops;
	size_t reps_done;
};

/* What a case's setup learnt of it (the data file's size, a stream's reads, a tree's
 * objects, a listing's entries), kept from its last round for its record. */
struct case_shape {
	size_t stream_reads, objects, entries_per_op;
	uint64_t file_bytes, listed_bytes_per_op;
};

struct case_run {
	const struct suite_config *cfg;
	const struct bench_case *c;
	struct case_samples s;    /* every round's, together */
	struct case_shape shape;
	size_t reps_begun;        /* over every round: each repetition draws its own order */
	size_t rounds;
	double seconds;           /* set-up, timing and clean-up, over every round */
};

/*
 * A warm case on an unchanged tree passes over its objects again until the repetition
 * has lasted --min-rep-seconds: a repetition of a few milliseconds is at the mercy of one
 * scheduler hiccup, a longer one averages it out.  A cold case cannot (its second pass
 * would be warm), nor can one that changes the tree.
 */
static int may_repeat_passes(const struct bench_ctx *ctx)
{
	return ctx->c->cache == CACHE_WARM && ctx->c->bench->reusable;
}

/* An untimed callback, its CPU time added to *cpu (when `counting`: after the warm-up). */
static int untimed(int (*callback)(struct bench_ctx *, size_t), struct bench_ctx *ctx, size_t i, int counting,
		   uint64_t *cpu)
{
	uint64_t c0;
	int rc;

	if (!callback)
		return 0;
	if (!counting)
		return callback(ctx, i);
	c0 = thread_cpu_ns();
	rc = callback(ctx, i);
	*cpu += thread_cpu_ns() - c0;
	return rc;
}

/*
 * One repetition's timed loop.  Returns -1 if an operation failed.  The case's budget
 * may stop it early, except a forward stream's: its first reads cost more than its last
 * (readahead's window grows along it), so a stream cut short is another measurement.
 */
static int time_repetition(struct bench_ctx *ctx, const struct clock_costs *clock, uint64_t budget_ns,
			   struct case_samples *s)
{
	const struct bench *b = ctx->c->bench;
	size_t warm = warmup_ops(ctx->cfg, ctx->n), timed = 0, brackets = 0;
	uint64_t start = now_ns(), sum = 0, t1 = start, cpu_from = 0, untimed_cpu = 0;
	int out_of_time = 0;

	for (size_t pass = 0; !out_of_time && !stop_requested; pass++) {
		ctx->pass = pass;
		if (pass > 0 && b->between_passes) {
			uint64_t c0 = thread_cpu_ns();

			if (b->between_passes(ctx) != 0)
				return -1;
			untimed_cpu += thread_cpu_ns() - c0;
		}
		for (size_t i = 0; i < ctx->n && !stop_requested; i++) {
			int counting = !(pass == 0 && i < warm), rc;
			uint64_t t0, sample;

			if (counting && timed == 0 && cpu_from == 0)
				cpu_from = thread_cpu_ns();
			if (untimed(b->before_one, ctx, i, counting, &untimed_cpu) != 0)
				return -1;
			t0 = now_ns();
			rc = b->run_one(ctx, i);
			t1 = now_ns();
			if (rc != 0)
				return -1;
			if (untimed(b->after_one, ctx, i, counting, &untimed_cpu) != 0)
				return -1;
			brackets += counting ? (b->before_one != NULL) + (b->after_one != NULL) : 0;
			sample = t1 - t0 > clock->timer_ns ? t1 - t0 - clock->timer_ns : 0;
			if (!counting) {
				latency_add(&s->warm, sample);
				continue;
			}
			latency_add(&s->timed, sample);
			if (ctx->c->order == ORDER_FORWARD && i > 0)
				gap_latency_add(&s->by_gap, data_offset(ctx, i) - data_offset(ctx, i - 1) - ctx->c->size,
						sample);
			sum += sample;
			timed++;
			if (ctx->c->order != ORDER_FORWARD && timed >= MIN_TIMED_OPS && t1 - start > budget_ns) {
				out_of_time = 1;
				break;
			}
		}
		if (!may_repeat_passes(ctx) || (double)(t1 - start) >= ctx->cfg->min_rep_seconds * 1e9)
			break;
	}
	ctx->pass = 0;
	if (timed > 0) {
		/* The loop's own work is two clock reads an operation (its timer overhead); a
		 * bracket leaves about one clock read's system call uncounted (cpu_overhead_ns). */
		double spent = (double)(thread_cpu_ns() - cpu_from) - (double)untimed_cpu
			       - (double)timed * (double)clock->timer_ns - (double)brackets * (double)clock->cpu_ns;

		s->cpu_sum_ns += spent > 0 ? spent : 0;
		s->rep_means[s->reps_done] = (double)sum / (double)timed;
		s->rep_ops[s->reps_done] = timed;
		s->reps_done++;
	}
	return 0;
}

static void write_result(struct json *j, const struct case_run *run)
{
	const struct bench_case *c = run->c;
	const struct suite_config *cfg = run->cfg;
	const struct case_samples *s = &run->s;
	struct latency_summary timed, warm;
	struct rep_stats reps;
	size_t total = 0;

	latency_summarize(&s->timed, &timed);
	latency_summarize(&s->warm, &warm);
	rep_stats_compute(s->rep_means, s->reps_done, &reps);
	json_begin_object(j);
	json_kv_string(j, "bench", c->bench->name);
	json_kv_string(j, "family", c->bench->family == FAMILY_META ? "meta" : "data");
	json_kv_string(j, "op", c->bench->op);
	json_kv_string(j, "isolates", c->bench->isolates);
	json_key(j, "size");
	if (c->size)
		json_u64(j, c->size);
	else
		json_null(j);
	if (at_mix(c->bench))
		json_kv_u64_array(j, "file_sizes", cfg->file_sizes, cfg->nfile_sizes);
	if (takes_request_sizes(c->bench, cfg))
		json_kv_u64_array(j, "request_sizes", cfg->request_sizes, cfg->nrequest_sizes);
	json_kv_string(j, "order", order_name(c));
	if (c->order == ORDER_FORWARD) {
		json_kv_u64(j, "gap", c->gap);
		json_kv_u64(j, "stream_reads", (uint64_t)run->shape.stream_reads);
		json_kv_u64(j, "file_bytes", run->shape.file_bytes);
		gap_latency_write(j, &s->by_gap);
	}
	json_kv_string(j, "cache", cache_mode_name(c->cache));
	json_key(j, "cold_method");
	if (c->cache != CACHE_COLD)
		json_null(j);
	else
		json_string(j, c->bench->family == FAMILY_META ? "drop_caches" : "fadvise_dontneed");
	json_kv_u64(j, "block_size", cfg->block_size);
	if (c->bench->family == FAMILY_DATA)
		json_kv_bool(j, "partial_block", c->size % cfg->block_size != 0);
	else {
		/* What --files asked for beside what the setup made: a mix's setup makes fewer
		 * where the asked count would hold more than a repetition writes (meta.c), and a
		 * case at a workload's count is known by the count asked for. */
		json_kv_u64(j, "files_asked", cfg->files);
		json_kv_u64(j, "objects", run->shape.objects);
	}
	if (run->shape.entries_per_op) {
		json_kv_u64(j, "entries_per_op", run->shape.entries_per_op);
		json_kv_u64(j, "listed_bytes_per_op", run->shape.listed_bytes_per_op);
	}
	json_kv_u64(j, "reps", s->reps_done);
	json_kv_u64(j, "rounds", run->rounds);
	json_key(j, "ops_per_rep");
	json_begin_array(j);
	for (size_t r = 0; r < s->reps_done; r++) {
		json_u64(j, s->rep_ops[r]);
		total += s->rep_ops[r];
	}
	json_end_array(j);
	json_kv_u64(j, "ops", total);
	json_key(j, "warmup");
	json_begin_object(j);
	json_kv_u64(j, "ops", warm.n);
	json_kv_double(j, "mean_ns", warm.n ? warm.mean : 0);
	json_kv_u64(j, "p50_ns", warm.p50);
	json_end_object(j);
	json_key(j, "latency_ns");
	json_begin_object(j);
	json_kv_double(j, "mean", timed.mean);
	json_kv_double(j, "ci95_low", reps.ci_low);
	json_kv_double(j, "ci95_high", reps.ci_high);
	json_kv_double(j, "rsd", reps.rsd);
	json_kv_u64(j, "min", timed.min);
	json_kv_u64(j, "p50", timed.p50);
	json_kv_u64(j, "p90", timed.p90);
	json_kv_u64(j, "p99", timed.p99);
	json_kv_u64(j, "p999", timed.p999);
	json_kv_u64(j, "max", timed.max);
	json_end_object(j);
	json_key(j, "cpu_ns");
	json_begin_object(j);
	json_kv_double(j, "mean", timed.n ? s->cpu_sum_ns / (double)timed.n : 0);
	json_end_object(j);
	json_key(j, "rep_means_ns");
	json_begin_array(j);
	for (size_t r = 0; r < s->reps_done; r++)
		json_double(j, s->rep_means[r]);
	json_end_array(j);
	latency_write_histogram(j, &timed);
	json_kv_bool(j, "bimodal", timed.bimodal);
	json_key(j, "bimodal_peaks_ns");
	if (timed.bimodal) {
		json_begin_array(j);
		json_u64(j, 1ULL << timed.peak_buckets[0]);
		json_u64(j, 1ULL << timed.peak_buckets[1]);
		json_end_array(j);
	} else {
		json_null(j);
	}
	json_kv_bool(j, "interrupted", stop_requested != 0);
	json_kv_double(j, "seconds", run->seconds);
	json_end_object(j);
}

/* Setup, cache state, timed loop; for benchmarks that change the tree, start afresh. */
static int run_repetitions(struct bench_ctx *ctx, const char *dirname, const struct clock_costs *clock,
			   struct case_samples *s, size_t first_rep, size_t reps)
{
	const struct suite_config *cfg = ctx->cfg;
	const struct bench *b = ctx->c->bench;
	uint64_t budget = (uint64_t)(cfg->case_seconds * 1e9 / (double)cfg->reps);
	int set_up = 0, rc = 0;

	for (size_t rep = first_rep; rep < first_rep + reps && rc == 0 && !stop_requested; rep++) {
		struct rng rng;

		rng_seed(&rng, cfg->seed ^ case_seed(ctx->c) ^ (rep << 48));
		if (!set_up) {
			rc = b->setup(ctx);
			set_up = 1;
			if (rc != 0)
				break;
			free(ctx->order);
			ctx->order = xcalloc(ctx->norder, sizeof(*ctx->order));
		}
		if (ctx->c->order == ORDER_FORWARD)
			ctx->n = make_forward_stream(ctx->order, ctx->stream_reads, ctx->norder,
						     (double)ctx->c->gap / (double)ctx->stride, &rng);
		else
			make_order(ctx->order, ctx->norder, ctx->c->order != ORDER_SEQ, &rng);
		rc = b->prepare_cache(ctx);
		if (rc == 0)
			rc = time_repetition(ctx, clock, budget, s);
		if (b->reusable)
			continue;
		if (b->teardown)
			b->teardown(ctx);
		set_up = 0;
		close(ctx->dirfd);
		ctx->dirfd = -1;
		if (remove_tree_at(cfg->workdir_fd, dirname) != 0)
			return -1;
		ctx->dirfd = open_case_dir(cfg, dirname);
		if (ctx->dirfd < 0)
			return -1;
	}
	if (set_up && b->teardown)
		b->teardown(ctx);
	return rc;
}

struct case_run *case_run_new(const struct suite_config *cfg, const struct bench_case *c)
{
	struct case_run *r = xcalloc(1, sizeof(*r));

	r->cfg = cfg;
	r->c = c;
	latency_init(&r->s.timed);
	latency_init(&r->s.warm);
	r->s.rep_means = xcalloc(cfg->reps, sizeof(*r->s.rep_means));
	r->s.rep_ops = xcalloc(cfg->reps, sizeof(*r->s.rep_ops));
	return r;
}

int case_run_round(struct case_run *r, size_t reps, const struct clock_costs *clock)
{
	struct bench_ctx ctx = { .cfg = r->cfg, .c = r->c, .fd = -1, .pending_fd = -1, .listed_fd = -1 };
	size_t timed_before = r->s.reps_done;
	char dirname[256];
	uint64_t started = now_ns();
	int rc;

	if (r->reps_begun + reps > r->cfg->reps)
		reps = r->cfg->reps - r->reps_begun;
	case_dir_name(r->c, dirname, sizeof(dirname));
	ctx.dirfd = open_case_dir(r->cfg, dirname);
	rc = ctx.dirfd < 0 ? -1 : run_repetitions(&ctx, dirname, clock, &r->s, r->reps_begun, reps);
	r->reps_begun += reps;
	r->rounds++;
	r->shape = (struct case_shape){ .stream_reads = ctx.stream_reads, .objects = ctx.n,
					.entries_per_op = ctx.entries_per_op, .file_bytes = ctx.file_bytes,
					.listed_bytes_per_op = ctx.listed_bytes_per_op };
	if (ctx.pending_fd >= 0)
		close(ctx.pending_fd);
	if (ctx.dirfd >= 0)
		close(ctx.dirfd);
	if (remove_tree_at(r->cfg->workdir_fd, dirname) != 0)
		rc = -1;
	if (rc == 0 && reps > 0 && r->s.reps_done == timed_before && !stop_requested)
		rc = fail_msg("%s: no operation could be timed", r->c->bench->name);
	free(ctx.order);
	r->seconds += (double)(now_ns() - started) / 1e9;
	return rc;
}

int case_run_write(const struct case_run *r, struct json *j)
{
	if (r->s.reps_done == 0)
		return 0;
	write_result(j, r);
	return 1;
}

void case_run_free(struct case_run *r)
{
	if (!r)
		return;
	free(r->s.rep_means);
	free(r->s.rep_ops);
	latency_free(&r->s.timed);
	latency_free(&r->s.warm);
	free(r);
}
