/*
 * fsreplay.c - replay a trace's operations for real beneath a target directory (issue 5).
 *
 * Reads a plan (plan.h), builds the tree it needs (Tang 5.4), optionally drops caches,
 * then runs the operations in one of three modes:
 *   serial   one thread, plan order, each operation as soon as the previous ends (Tang);
 *   threads  one thread per traced actor, each in its own order, and an operation on a
 *            file or directory waits for the one before it on that resource (ARTC);
 *   timed    threads, and each actor also keeps its traced think time; the time slept
 *            beyond (or short of) what was asked is carried into the next sleep, so
 *            errors do not add up to drift.
 * Writes JSON: runtime, per-operation latency distributions, and errors compared with the
 * trace's (an operation that failed traced should fail alike; one that did not should not),
 * and the CPU time the calls took: in all, and with --cpu-per-op by kind of operation.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "beneath.h"
#include "cache.h"
#include "clock.h"
#include "json.h"
#include "latency.h"
#include "plan.h"
#include "replay_ops.h"
#include "util.h"

enum mode { MODE_SERIAL, MODE_THREADS, MODE_TIMED };
static const char *const mode_names[] = { "serial", "threads", "timed" };
enum { MISMATCHES_KEPT = 20, FILL_CHUNK = 1 << 20 };

struct options {
	const char *plan, *target, *output;
	enum mode mode;
	int cold, skip_tree, tree_only, allow_nonempty, progress_fd;
	int cpu_per_op;       /* bracket every operation with the thread's CPU clock */
	int skip_syncs;       /* the plan's syncs succeed at once, as libeatmydata makes a program's */
	uint64_t bracket_ns;  /* what an empty bracket reads, subtracted from each */
};

struct mismatch {
	size_t index;
	int expected, got;
};

struct tally { /* per operation kind */
	uint64_t count, failed_as_traced, failed_unexpectedly, succeeded_unexpectedly, failed_differently;
};

struct worker {
	pthread_t thread;
	const struct plan *plan;
	const struct options *opt;
	struct replay_ctx ctx;
	size_t *ops, n_ops;
	struct latency lat[OP_KINDS];
	struct tally tally[OP_KINDS];
	int64_t cpu_ns[OP_KINDS];  /* --cpu-per-op: CPU time in each kind of operation */
	struct mismatch mismatch[MISMATCHES_KEPT];
	size_t n_mismatch;
	uint64_t think_ns, slept_ns;
	int64_t drift_ns;
	uint64_t thread_cpu_ns;    /* the worker thread's own CPU time over its operations */
};

static _Atomic unsigned char *done;   /* per operation, for dependencies */
static _Atomic size_t completed;

/* The progress thread reports every PROGRESS_NS until the replay ends; the end wakes it at
 * once (replay_ended), so no replay waits out a report's interval before it exits. */
#define PROGRESS_NS 200000000ULL
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress_wake = PTHREAD_COND_INITIALIZER;
static int replay_over;

static void usage(FILE *out)
{
	fputs("Usage: fsreplay --plan FILE --target DIR [--mode serial|threads|timed] [--cold]\n"
	      "                [--skip-tree] [--allow-nonempty] [--output FILE] [--progress-fd N]\n"
	      "                [--tree-only] [--no-openat2] [--cpu-per-op] [--skip-syncs]\n"
	      "Replays a plan's operations for real beneath DIR (every path is resolved with\n"
	      "openat2 RESOLVE_BENEATH) and writes a JSON report (stdout by default).\n"
	      "--cpu-per-op reads the thread's CPU clock around every operation, to say the CPU\n"
	      "time each kind took; each read is a system call, so the runtime grows by them.\n"
	      "--skip-syncs makes the plan's fsync and fdatasync succeed at once and drops\n"
	      "O_SYNC and O_DSYNC from its opens, as a program run under libeatmydata does; the\n"
	      "replay's own writeback of its tree and --cold still sync.\n", out);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "plan", required_argument, NULL, 'p' }, { "target", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'm' }, { "cold", no_argument, NULL, 'c' },
		{ "skip-tree", no_argument, NULL, 's' }, { "tree-only", no_argument, NULL, 'T' }, { "allow-nonempty", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' }, { "progress-fd", required_argument, NULL, 'P' },
		{ "no-openat2", no_argument, NULL, 'n' }, { "cpu-per-op", no_argument, NULL, 'C' },
		{ "skip-syncs", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 },
	};
	int c;

	*o = (struct options){ .mode = MODE_SERIAL, .progress_fd = -1 };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'p': o->plan = optarg; break;
		case 't': o->target = optarg; break;
		case 'o': o->output = optarg; break;
		case 'c': o->cold = 1; break;
		case 's': o->skip_tree = 1; break;
		case 'T': o->tree_only = 1; break;
		case 'a': o->allow_nonempty = 1; break;
		case 'C': o->cpu_per_op = 1; break;
		case 'S': o->skip_syncs = 1; break;
		case 'P': o->progress_fd = atoi(optarg); break;
		case 'n': beneath_force_fallback(1); break; /* the checked openat walk, for tests */
		case 'm':
			for (o->mode = 0; o->mode <= MODE_TIMED && strcmp(mode_names[o->mode], optarg); o->mode++)
				;
			if (o->mode > MODE_TIMED)
				usage_error("--mode must be serial, threads or timed, not '%s'", optarg);
			break;
		case 'h': usage(stdout); exit(0);
		default: usage_error("unknown option");
		}
	}
	if (!o->plan || !o->target)
		usage_error("--plan and --target are required");
	if (o->skip_tree && o->tree_only)
		usage_error("--skip-tree and --tree-only leave nothing to do");
	if (optind != argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

/* The directories above a tree entry, made beneath root where missing. */
static int make_parents(int root, const char *path)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];

	if (slash && (size_t)(slash - path) < sizeof(parent)) {
		memcpy(parent, path, (size_t)(slash - path));
		parent[slash - path] = '\0';
		if (parent[0] && beneath_mkdirs(root, parent, 0755) != 0)
			return -1;
	}
	return 0;
}

/* One symbolic link of the tree, with its parents, holding its traced text.  Making it
 * follows nothing; what later follows it stays beneath root (beneath.h). */
static int make_link(int root, const struct plan_entry *e)
{
	const char *base;
	int dir, rc, saved;

	if (make_parents(root, e->path) != 0 || (dir = beneath_parent(root, e->path, &base)) < 0)
		return -1;
	rc = symlinkat(e->target, dir, base);
	saved = errno;
	close(dir);
	errno = saved;
	return rc;
}

/* One file of the tree, with its parents; -1 and errno, printing nothing: the caller
 * decides whether the failure is a refused hostile path or a real error. */
static int fill_file(int root, const struct plan_entry *e, const char *chunk)
{
	int fd, saved;

	if (make_parents(root, e->path) != 0)
		return -1;
	fd = beneath_open(root, e->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	for (int64_t left = e->size; left > 0;) {
		ssize_t n = write(fd, chunk, left < FILL_CHUNK ? (size_t)left : FILL_CHUNK);
		if (n <= 0) {
			saved = n < 0 ? errno : ENOSPC;
			close(fd);
			errno = saved;
			return -1;
		}
		left -= n;
	}
	return close(fd);
}

/* Tang 5.4: the directories, files (with real data: reading a hole costs nothing) and
 * symbolic links the trace needs before it starts.  An entry the tree cannot hold (a
 * hostile path) is reported and skipped; the operations on it will fail and be counted. */
static int build_tree(int root, const struct plan *p, struct json *j)
{
	char *chunk = xaligned(4096, FILL_CHUNK);
	size_t dirs = 0, files = 0, links = 0, refused = 0;
	uint64_t bytes = 0, start = now_ns();

	memset(chunk, 'f', FILL_CHUNK);
	for (size_t i = 0; i < p->n_tree && !stop_requested; i++) {
		const struct plan_entry *e = &p->tree[i];
		int rc = e->target ? make_link(root, e)
			 : e->size < 0 ? beneath_mkdirs(root, e->path, 0755) : fill_file(root, e, chunk);

		if (rc != 0) {
			if (errno != EXDEV && errno != ELOOP && errno != ENAMETOOLONG && errno != EINVAL) {
				free(chunk);
				return fail_errno("building the tree", e->path);
			}
			fprintf(stderr, "fsreplay: tree entry %s refused: %s\n", e->path, strerror(errno));
			refused++;
			continue;
		}
		if (e->target) {
			links++;
		} else if (e->size < 0) {
			dirs++;
		} else {
			files++;
			bytes += (uint64_t)e->size;
		}
	}
	free(chunk);
	int sync_fd = beneath_open(root, ".", O_RDONLY | O_DIRECTORY, 0);
	if (sync_fd < 0 || syncfs(sync_fd) != 0)
		return fail_errno("syncfs", "the target");
	close(sync_fd);
	json_key(j, "tree");
	json_begin_object(j);
	json_kv_u64(j, "directories", dirs);
	json_kv_u64(j, "files", files);
	json_kv_u64(j, "links", links);
	json_kv_u64(j, "bytes", bytes);
	json_kv_u64(j, "refused", refused);
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	json_end_object(j);
	return 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR && !stop_requested)
		;
}

/* Timed mode: sleep the traced think time less what earlier sleeps overshot. */
static void keep_think_time(struct worker *w, const struct plan_op *op)
{
	int64_t want = (int64_t)op->think_ns - w->drift_ns;
	uint64_t start;

	w->think_ns += op->think_ns;
	if (want <= 0) {
		w->drift_ns -= (int64_t)op->think_ns;
		return;
	}
	start = now_ns();
	sleep_ns((uint64_t)want);
	uint64_t slept = now_ns() - start;
	w->slept_ns += slept;
	w->drift_ns += (int64_t)slept - (int64_t)op->think_ns;
}

static void wait_for(size_t dep)
{
	unsigned spins = 0;

	while (!atomic_load_explicit(&done[dep], memory_order_acquire) && !stop_requested) {
		if (++spins < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

static void record(struct worker *w, size_t index, const struct plan_op *op, int got, uint64_t ns)
{
	struct tally *t = &w->tally[op->kind];
	int expected = op->expect_errno;

	t->count++;
	if (op->timed)
		latency_add(&w->lat[op->kind], ns);
	if (got == expected)
		t->failed_as_traced += got != 0;
	else if (expected == 0)
		t->failed_unexpectedly++;
	else if (got == 0)
		t->succeeded_unexpectedly++;
	else
		t->failed_differently++;
	if (got != expected && w->n_mismatch < MISMATCHES_KEPT)
		w->mismatch[w->n_mismatch++] = (struct mismatch){ index, expected, got };
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	const struct plan *p = w->plan;
	uint64_t thread_start = thread_cpu_ns();

	for (size_t i = 0; i < w->n_ops && !stop_requested; i++) {
		size_t index = w->ops[i];
		const struct plan_op *op = &p->ops[index];

		if (w->opt->mode != MODE_SERIAL && op->dep >= 0)
			wait_for((size_t)op->dep);
		if (w->opt->mode == MODE_TIMED && op->think_ns)
			keep_think_time(w, op);
		uint64_t cpu = w->opt->cpu_per_op ? thread_cpu_ns() : 0;
		uint64_t start = now_ns();
		int got = replay_op(&w->ctx, op);
		uint64_t ns = now_ns() - start;
		if (w->opt->cpu_per_op)
			w->cpu_ns[op->kind] += (int64_t)(thread_cpu_ns() - cpu) - (int64_t)w->opt->bracket_ns;
		atomic_store_explicit(&done[index], 1, memory_order_release);
		atomic_fetch_add_explicit(&completed, 1, memory_order_relaxed);
		record(w, index, op, got, ns);
	}
	w->thread_cpu_ns = thread_cpu_ns() - thread_start;
	return NULL;
}

enum { BOOKKEEPING_SAMPLES = 20000 };

/*
 * The CPU time the replay spends around each operation on its own account: run_worker's
 * two clock reads (and, with --cpu-per-op, its two CPU clock reads) and its record() of the
 * sample, with no operation between.  Subtracted from the replay's CPU time so that what
 * is left is the calls' (write_cpu); its atomics are left out, a few ns an operation.
 */
static double bookkeeping_ns_per_op(const struct plan *p, const struct options *opt)
{
	struct worker scratch = { .plan = p, .opt = opt };
	struct plan_op op = { .timed = 1 };
	uint64_t start = thread_cpu_ns();

	latency_init(&scratch.lat[op.kind]);
	for (size_t i = 0; i < BOOKKEEPING_SAMPLES; i++) {
		uint64_t cpu = opt->cpu_per_op ? thread_cpu_ns() : 0;
		uint64_t t0 = now_ns();
		uint64_t ns = now_ns() - t0;
		if (opt->cpu_per_op)
			scratch.cpu_ns[op.kind] += (int64_t)(thread_cpu_ns() - cpu);
		record(&scratch, i, &op, 0, ns);
	}
	double per_op = (double)(thread_cpu_ns() - start) / BOOKKEEPING_SAMPLES;
	latency_free(&scratch.lat[op.kind]);
	return per_op;
}

/*
 * "cpu": the workers' CPU time over the replay (each worker thread's own clock, the
 * scheduler's exact count; not the progress thread's, which is no call's), the process's
 * user/system split (getrusage, sampled by ticks, so a guide only), the
 * bookkeeping's estimate, and calls_ns, the rest: what the replayed calls cost the
 * processor.  A program replayed on the filesystem it was traced on thereby says how much
 * of its own CPU time its calls took there, measured rather than priced from fsbench.
 */
static void write_cpu(struct json *j, uint64_t cpu_ns, const struct rusage *before, const struct rusage *after,
		      double bookkeeping_ns, int per_op)
{
	double calls = (double)cpu_ns - bookkeeping_ns;

	json_key(j, "cpu");
	json_begin_object(j);
	json_kv_u64(j, "total_ns", cpu_ns);
	json_kv_u64(j, "user_ns", timeval_ns(&after->ru_utime) - timeval_ns(&before->ru_utime));
	json_kv_u64(j, "system_ns", timeval_ns(&after->ru_stime) - timeval_ns(&before->ru_stime));
	json_kv_u64(j, "bookkeeping_ns", (uint64_t)bookkeeping_ns);
	json_kv_bool(j, "per_op", per_op);
	json_kv_u64(j, "calls_ns", calls > 0 ? (uint64_t)calls : 0);
	json_end_object(j);
}

static const char *errno_name(int e)
{
	const char *name = e ? strerrorname_np(e) : NULL;

	return e == 0 ? "success" : name ? name : "unknown";
}

/* --cpu-per-op: the CPU time of every operation of kind k, less each bracket's own; never below 0. */
static uint64_t kind_cpu_ns(const struct worker *workers, size_t n_workers, int k)
{
	int64_t sum = 0;

	for (size_t i = 0; i < n_workers; i++)
		sum += workers[i].cpu_ns[k];
	return sum > 0 ? (uint64_t)sum : 0;
}

static void write_operations(struct json *j, struct worker *workers, size_t n_workers)
{
	json_key(j, "operations");
	json_begin_object(j);
	for (int k = 0; k < OP_KINDS; k++) {
		struct tally t = { 0 };
		struct latency all;
		struct latency_summary s;

		latency_init(&all);
		for (size_t i = 0; i < n_workers; i++) {
			struct tally *w = &workers[i].tally[k];
			t.count += w->count;
			t.failed_as_traced += w->failed_as_traced;
			t.failed_unexpectedly += w->failed_unexpectedly;
			t.succeeded_unexpectedly += w->succeeded_unexpectedly;
			t.failed_differently += w->failed_differently;
			latency_merge(&all, &workers[i].lat[k]);
		}
		if (!t.count) {
			latency_free(&all);
			continue;
		}
		latency_summarize(&all, &s);
		json_key(j, plan_kind_names[k]);
		json_begin_object(j);
		json_kv_u64(j, "count", t.count);
		json_kv_u64(j, "timed", s.n);
		if (workers[0].opt->cpu_per_op)
			json_kv_u64(j, "cpu_ns", kind_cpu_ns(workers, n_workers, k));
		json_key(j, "latency_ns");
		json_begin_object(j);
		json_kv_double(j, "mean", s.n ? s.mean : 0);
		json_kv_u64(j, "total", (uint64_t)(s.mean * (double)s.n + 0.5));
		json_kv_u64(j, "p50", s.p50);
		json_kv_u64(j, "p90", s.p90);
		json_kv_u64(j, "p99", s.p99);
		json_kv_u64(j, "max", s.max);
		latency_write_histogram(j, &s);
		json_end_object(j);
		json_key(j, "errors");
		json_begin_object(j);
		json_kv_u64(j, "failed_as_traced", t.failed_as_traced);
		json_kv_u64(j, "failed_unexpectedly", t.failed_unexpectedly);
		json_kv_u64(j, "succeeded_unexpectedly", t.succeeded_unexpectedly);
		json_kv_u64(j, "failed_differently", t.failed_differently);
		json_end_object(j);
		json_end_object(j);
		latency_free(&all);
	}
	json_end_object(j);
}

static void write_mismatches(struct json *j, const struct plan *p, struct worker *workers, size_t n_workers)
{
	json_key(j, "mismatches");
	json_begin_array(j);
	for (size_t i = 0; i < n_workers; i++) {
		for (size_t m = 0; m < workers[i].n_mismatch; m++) {
			const struct mismatch *x = &workers[i].mismatch[m];
			json_begin_object(j);
			json_kv_u64(j, "operation", x->index);
			json_kv_string(j, "kind", plan_kind_names[p->ops[x->index].kind]);
			json_kv_string(j, "path", p->ops[x->index].path);
			json_kv_string(j, "traced", errno_name(x->expected));
			json_kv_string(j, "replayed", errno_name(x->got));
			json_end_object(j);
		}
	}
	json_end_array(j);
}

/* Which operations each worker runs: all of them in order (serial), or each actor's. */
static size_t assign(const struct plan *p, enum mode mode, struct worker **out)
{
	size_t n = mode == MODE_SERIAL ? 1 : (p->actors ? p->actors : 1);
	struct worker *w = xcalloc(n, sizeof(*w));
	size_t *fill = xcalloc(n, sizeof(*fill));

	for (size_t i = 0; i < p->n_ops; i++)
		w[mode == MODE_SERIAL ? 0 : p->ops[i].actor].n_ops++;
	for (size_t a = 0; a < n; a++)
		w[a].ops = xcalloc(w[a].n_ops ? w[a].n_ops : 1, sizeof(size_t));
	for (size_t i = 0; i < p->n_ops; i++) {
		size_t a = mode == MODE_SERIAL ? 0 : p->ops[i].actor;
		w[a].ops[fill[a]++] = i;
	}
	free(fill);
	*out = w;
	return n;
}

static void *progress_thread(void *arg)
{
	const struct options *o = ((struct worker *)arg)->opt;
	size_t total = ((struct worker *)arg)->plan->n_ops;
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline); /* pthread_cond_timedwait's clock */
	pthread_mutex_lock(&progress_lock);
	for (;;) {
		size_t now = atomic_load(&completed);

		report_progress(o->progress_fd, now, total);
		if (now >= total || replay_over || stop_requested)
			break;
		deadline.tv_nsec += (long)PROGRESS_NS;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		while (!replay_over && !stop_requested &&
		       pthread_cond_timedwait(&progress_wake, &progress_lock, &deadline) == 0)
			;
	}
	pthread_mutex_unlock(&progress_lock);
	return NULL;
}

/* The replay has run: the progress thread writes its last line and ends now. */
static void replay_ended(void)
{
	pthread_mutex_lock(&progress_lock);
	replay_over = 1;
	pthread_cond_signal(&progress_wake);
	pthread_mutex_unlock(&progress_lock);
}

/* End the report's JSON and put it in place (report_close); 0, or EXIT_RUNTIME. */
static int finish_report(struct json *j, FILE *out, const char *output)
{
	json_end_object(j);
	fputc('\n', out);
	return report_close(out, output);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct plan plan;
	struct worker *workers;
	struct json j;
	pthread_t progress;
	FILE *out;
	int root, *fds;
	size_t n_workers;
	uint64_t start, runtime, cpu = 0;
	struct rusage usage_before, usage_after;
	double bookkeeping_per_op;

	program_name = "fsreplay";
	parse_options(argc, argv, &opt);
	stop_on_signals();
	if (plan_load(opt.plan, &plan) != 0)
		return EXIT_USAGE;
	root = open(opt.target, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fail_errno("open target directory", opt.target);
		return EXIT_USAGE;
	}
	if (!opt.skip_tree && !opt.allow_nonempty &&
	    require_empty_dir(opt.target, "replay builds its tree only in an empty directory "
				      "(--allow-nonempty to use what is there)") != 0)
		return EXIT_USAGE;
	out = report_open(opt.output); /* a replay that fails part-way leaves no half a report */
	json_init(&j, out);
	json_begin_object(&j);
	json_kv_u64(&j, "schema_version", 1);
	json_kv_string(&j, "kind", "replay");
	json_kv_string(&j, "mode", mode_names[opt.mode]);
	json_kv_string(&j, "target", opt.target);
	json_kv_u64(&j, "planned_operations", plan.n_ops);
	json_kv_u64(&j, "actors", plan.actors);
	if (!opt.skip_tree && build_tree(root, &plan, &j) != 0)
		return EXIT_RUNTIME;
	if (opt.tree_only) /* the tree alone, e.g. so a tracer sees only the replay */
		return finish_report(&j, out, opt.output);
	if (opt.cold && cache_drop_all() != 0)
		return EXIT_RUNTIME;
	json_kv_string(&j, "cache", opt.cold ? "cold" : "warm");
	json_kv_bool(&j, "syncs_skipped", opt.skip_syncs);

	fds = xcalloc(plan.handles ? plan.handles : 1, sizeof(int));
	for (uint32_t h = 0; h < plan.handles; h++)
		fds[h] = -1;
	done = xcalloc(plan.n_ops ? plan.n_ops : 1, 1);
	n_workers = assign(&plan, opt.mode, &workers);
	for (size_t i = 0; i < n_workers; i++) {
		workers[i].plan = &plan;
		workers[i].opt = &opt;
		replay_ctx_init(&workers[i].ctx, root, fds, plan.max_io);
		workers[i].ctx.skip_syncs = opt.skip_syncs;
		for (int k = 0; k < OP_KINDS; k++)
			latency_init(&workers[i].lat[k]);
	}
	if (opt.cpu_per_op) /* an empty bracket: the CPU clock's reads and run_worker's two clock reads */
		opt.bracket_ns = cpu_overhead_ns() + timer_overhead_ns();
	bookkeeping_per_op = bookkeeping_ns_per_op(&plan, &opt);
	if (opt.progress_fd >= 0 && pthread_create(&progress, NULL, progress_thread, &workers[0]) != 0)
		opt.progress_fd = -1; /* no progress lines, and nothing to join */
	getrusage(RUSAGE_SELF, &usage_before);
	start = now_ns();
	if (n_workers == 1) {
		run_worker(&workers[0]);
	} else {
		for (size_t i = 0; i < n_workers; i++)
			if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0)
				die("cannot start thread %zu of %zu", i, n_workers);
		for (size_t i = 0; i < n_workers; i++)
			pthread_join(workers[i].thread, NULL);
	}
	runtime = now_ns() - start;
	for (size_t i = 0; i < n_workers; i++)
		cpu += workers[i].thread_cpu_ns;
	getrusage(RUSAGE_SELF, &usage_after);
	if (opt.progress_fd >= 0) {
		replay_ended();
		pthread_join(progress, NULL);
	}
	/* Files the trace left open, and cached directories, are closed by exit, not by calls a
	 * tracer of the replay would see as the workload's. */

	size_t ran = atomic_load(&completed);
	json_kv_u64(&j, "operations_run", ran);
	json_kv_bool(&j, "interrupted", ran < plan.n_ops);
	json_kv_u64(&j, "runtime_ns", runtime);
	write_cpu(&j, cpu, &usage_before, &usage_after, bookkeeping_per_op * (double)ran, opt.cpu_per_op);
	if (opt.mode == MODE_TIMED) {
		uint64_t think = 0, slept = 0;
		for (size_t i = 0; i < n_workers; i++) {
			think += workers[i].think_ns;
			slept += workers[i].slept_ns;
		}
		json_key(&j, "think_time");
		json_begin_object(&j);
		json_kv_u64(&j, "traced_ns", think);
		json_kv_u64(&j, "slept_ns", slept);
		json_end_object(&j);
	}
	write_operations(&j, workers, n_workers);
	write_mismatches(&j, &plan, workers, n_workers);
	if (finish_report(&j, out, opt.output) != 0)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < n_workers; i++) {
		replay_ctx_free(&workers[i].ctx);
		for (int k = 0; k < OP_KINDS; k++)
			latency_free(&workers[i].lat[k]);
		free(workers[i].ops);
	}
	free(workers);
	free(fds);
	free((void *)done);
	plan_free(&plan);
	close(root);
	return ran < plan.n_ops ? EXIT_RUNTIME : 0;
}
