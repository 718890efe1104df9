/*
 * fsbench - what each filesystem operation costs, as latency distributions.
 *
 * Runs the metadata (meta.c) and data (data.c) benchmark tables against a directory on
 * the filesystem under test, in a private work directory it creates and removes, and
 * writes one JSON document (schema_version 1) with the environment and every result.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "env.h"
#include "json.h"
#include "runner.h"

#define FSBENCH_VERSION "0.1.0"
enum { SCHEMA_VERSION = 1, MAX_SIZES = 64, MAX_GAPS = 8, MAX_CASES = 4096 };

/* A request stops at 64 MiB; a copy, whose size is a whole file's, goes on to 1 TiB. */
#define MAX_REQUEST_BYTES (64ULL << 20)
#define MAX_COPY_BYTES (1ULL << 40)

/* What the target allows, found once before the plan is made. */
struct target_facts {
	int direct_ok;       /* the filesystem takes O_DIRECT */
	int can_drop;        /* this user may drop the page cache */
	int memory_only;     /* tmpfs or ramfs: no device, no cold state */
	uint64_t free_bytes; /* free to this user when the plan was made */
};

struct options {
	struct suite_config cfg;
	const char *only;        /* families or benchmark names, comma separated */
	const char *sizes_text;  /* explicit request sizes, or NULL for the defaults */
	uint64_t sizes[MAX_SIZES]; /* the request sizes swept, once the block size is known */
	size_t nsizes;
	unsigned orders, caches;
	uint64_t gaps[MAX_GAPS]; /* forward order: the gaps it is measured at */
	size_t ngaps;
	const char *json_path;
	int force, dry_run, list;
	int cpu;                 /* -1: do not pin */
	int progress_fd;
	const char *aging_state;
};

struct option_help {
	struct option opt;
	const char *arg, *help;
};

static const struct option_help option_table[] = {
	{ { "target", required_argument, 0, 't' }, "DIR", "directory on the filesystem under test (required)" },
	{ { "only", required_argument, 0, 'o' }, "LIST", "families (meta,data) or benchmark names to run" },
	{ { "quick", no_argument, 0, 'q' }, NULL, "a short run: fewer sizes, repetitions and operations (< 1 min)" },
	{ { "json", required_argument, 0, 'j' }, "FILE", "write the results here instead of standard output" },
	{ { "force", no_argument, 0, 'F' }, NULL, "allow --json to replace an existing file" },
	{ { "sizes", required_argument, 0, 's' }, "LIST", "request sizes, e.g. 512,4k,d-1,d,d+1,1M (d = block size)" },
	{ { "file-sizes", required_argument, 0, 'M' }, "LIST", "a workload's mix of sizes, cycled: bytes written into each file create_written_mix, create_renamed_mix, rename_written_mix, unlink_written_mix, write_new_mix and stat_listed_mix make, or each append of append_mix; e.g. 120,3k,40k,1M" },
	{ { "request-sizes", required_argument, 0, 'W' }, "LIST", "a workload's mix of request sizes, cycled: each write write_new_mix makes into its files (with --file-sizes), and the writes before each sync of fsync, fdatasync and fdatasync_overwrite (else one request); e.g. 4,4096,4" },
	{ { "orders", required_argument, 0, 'O' }, "LIST", "sequential,random,forward (creation order counts as sequential; forward: cold reads only)" },
	{ { "gaps", required_argument, 0, 'g' }, "LIST", "forward order: mean bytes skipped between reads (default 4k,16k,64k,256k)" },
	{ { "caches", required_argument, 0, 'c' }, "LIST", "cold,warm,direct" },
	{ { "reps", required_argument, 0, 'r' }, "N", "repetitions of every case (default 5, quick 3)" },
	{ { "rounds", required_argument, 0, 'u' }, "N", "passes over the cases, each taking a share of every case's repetitions, the cases in a new order each pass after the first (default: one per repetition; 1: each case's repetitions together)" },
	{ { "ops", required_argument, 0, 'n' }, "N", "data operations per repetition (default 4096, quick 256; a forward stream: at least 4096)" },
	{ { "files", required_argument, 0, 'N' }, "N", "entries per metadata hierarchy (default 10000, quick 1000)" },
	{ { "file-size", required_argument, 0, 'S' }, "SIZE", "data file size, e.g. 256M or 0.25mem (default 256M, quick 64M)" },
	{ { "warmup", required_argument, 0, 'w' }, "N", "operations discarded at the start of each repetition (default 5%)" },
	{ { "case-seconds", required_argument, 0, 'T' }, "S", "timed-work budget of one case (default 2, quick 0.25)" },
	{ { "min-rep-seconds", required_argument, 0, 'm' }, "S", "warm repetitions pass over their objects again until this long (default 0.1, quick 0.05; 0: one pass)" },
	{ { "block-size", required_argument, 0, 'b' }, "N", "block size d (default: the filesystem's f_bsize)" },
	{ { "seed", required_argument, 0, 'R' }, "N", "seed of every random order and forward stream (default 1)" },
	{ { "cpu", required_argument, 0, 'C' }, "N|none", "pin to this CPU (default: the last one allowed)" },
	{ { "data-file", required_argument, 0, 'D' }, "PATH", "an existing file for the read benchmarks (never written)" },
	{ { "aging-state", required_argument, 0, 'A' }, "TEXT", "how the filesystem was aged, recorded with the results" },
	{ { "progress-fd", required_argument, 0, 'P' }, "FD", "write 'progress DONE TOTAL LABEL' lines to this descriptor" },
	{ { "dry-run", no_argument, 0, 'd' }, NULL, "print the plan and the time estimate, run nothing" },
	{ { "list", no_argument, 0, 'l' }, NULL, "list the benchmarks and what each isolates" },
	{ { "version", no_argument, 0, 'V' }, NULL, "print the version" },
	{ { "help", no_argument, 0, 'h' }, NULL, "show this help" },
};
enum { OPTION_COUNT = sizeof(option_table) / sizeof(option_table[0]) };

static void print_help(void)
{
	printf("usage: fsbench --target DIR [options]\n\n"
	       "Measures the latency of filesystem operations beneath DIR.\n\noptions:\n");
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", option_table[i].opt.name,
			 option_table[i].arg ? " " : "", option_table[i].arg ? option_table[i].arg : "");
		printf("  %-24s %s\n", left, option_table[i].help);
	}
}

static void list_benches(void)
{
	const struct bench *tables[] = { meta_benches, data_benches };
	const size_t counts[] = { meta_bench_count, data_bench_count };

	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < counts[t]; i++)
			printf("%-10s %-5s %-8s %s\n", tables[t][i].name, t ? "data" : "meta",
			       tables[t][i].op, tables[t][i].isolates);
}

static long parse_count(const char *text, const char *option, long min)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || !end || *end || end == text || v < min)
		usage_error("--%s expects a whole number >= %ld, got '%s'", option, min, text);
	return v;
}

/* Parse "a,b,c" against a fixed vocabulary into a bitmask. */
static unsigned parse_choices(const char *text, const char *option, const char *const *names,
			      const unsigned *bits, size_t count)
{
	char *copy = xstrdup(text), *save = NULL;
	unsigned mask = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < count && strcmp(tok, names[k]) != 0; k++)
			;
		if (k == count)
			usage_error("--%s: unknown value '%s'", option, tok);
		mask |= bits[k];
	}
	free(copy);
	if (!mask)
		usage_error("--%s needs at least one value", option);
	return mask;
}

/*
 * A comma-separated list of at most `max` sizes from `min` bytes to `most` (--sizes,
 * --gaps, the mixes).  Where `d` is not 0, "d-1", "d" and "d+1" are relative to it, the
 * block size.
 */
static size_t parse_byte_list(const char *text, const char *option, const char *noun, uint64_t d, uint64_t min,
			      uint64_t most, size_t max, uint64_t *out)
{
	char *copy = xstrdup(text), *save = NULL;
	size_t n = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (n == max)
			usage_error("--%s: at most %zu values", option, max);
		if (d && strcmp(tok, "d") == 0)
			v = d;
		else if (d && strcmp(tok, "d-1") == 0)
			v = d - 1;
		else if (d && strcmp(tok, "d+1") == 0)
			v = d + 1;
		else if (parse_size(tok, &v) != 0 || v < min || v > most)
			usage_error("--%s: '%s' is not a %s between %llu B and %llu%s", option, tok, noun,
				    (unsigned long long)min, (unsigned long long)(most >> (most >> 30 ? 30 : 20)),
				    most >> 30 ? "G" : "M");
		out[n++] = v;
	}
	free(copy);
	if (n == 0)
		usage_error("--%s needs at least one value", option);
	return n;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const char *const order_names[] = { "sequential", "seq", "creation", "random", "rand", "forward" };
	static const unsigned order_bits[] = { ORDER_SEQ, ORDER_SEQ, ORDER_SEQ, ORDER_RANDOM, ORDER_RANDOM, ORDER_FORWARD };
	static const char *const cache_names[] = { "cold", "warm", "direct" };
	static const unsigned cache_bits[] = { CACHE_COLD, CACHE_WARM, CACHE_DIRECT };
	struct option longopts[OPTION_COUNT + 1];
	uint64_t size;
	int ch;

	memset(longopts, 0, sizeof(longopts));
	for (size_t i = 0; i < OPTION_COUNT; i++)
		longopts[i] = option_table[i].opt;
	memset(o, 0, sizeof(*o));
	o->cfg.warmup = -1;
	o->cfg.seed = 1;
	o->cfg.case_seconds = -1;
	o->cfg.min_rep_seconds = -1;
	o->orders = ORDER_SEQ | ORDER_RANDOM | ORDER_FORWARD;
	o->gaps[0] = 4 << 10;
	o->gaps[1] = 16 << 10;
	o->gaps[2] = 64 << 10;
	o->gaps[3] = 256 << 10;
	o->ngaps = 4;
	o->caches = CACHE_COLD | CACHE_WARM | CACHE_DIRECT;
	o->cpu = -2; /* the last CPU allowed */
	o->progress_fd = -1;
	o->aging_state = "unknown";
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 't': o->cfg.target = optarg; break;
		case 'o': o->only = optarg; break;
		case 'q': o->cfg.quick = 1; break;
		case 'j': o->json_path = optarg; break;
		case 'F': o->force = 1; break;
		case 's': o->sizes_text = optarg; break;
		case 'M':
			o->cfg.nfile_sizes = parse_byte_list(optarg, "file-sizes", "file size", 0, 0, MAX_REQUEST_BYTES,
							     MAX_FILE_SIZES, o->cfg.file_sizes);
			break;
		case 'W':
			o->cfg.nrequest_sizes = parse_byte_list(optarg, "request-sizes", "request size", 0, 1,
								MAX_REQUEST_BYTES, MAX_FILE_SIZES, o->cfg.request_sizes);
			break;
		case 'O': o->orders = parse_choices(optarg, "orders", order_names, order_bits, 6); break;
		case 'g': o->ngaps = parse_byte_list(optarg, "gaps", "gap", 0, 512, MAX_REQUEST_BYTES, MAX_GAPS, o->gaps); break;
		case 'c': o->caches = parse_choices(optarg, "caches", cache_names, cache_bits, 3); break;
		case 'r': o->cfg.reps = (size_t)parse_count(optarg, "reps", 1); break;
		case 'u': o->cfg.rounds = (size_t)parse_count(optarg, "rounds", 1); break;
		case 'n': o->cfg.ops = (size_t)parse_count(optarg, "ops", 1); break;
		case 'N': o->cfg.files = (size_t)parse_count(optarg, "files", 1); break;
		case 'S':
			if (parse_size(optarg, &size) != 0 || size < 4096)
				usage_error("--file-size expects a size of at least 4k (e.g. 256M, 0.25mem), got '%s'", optarg);
			o->cfg.file_size = size;
			break;
		case 'w': o->cfg.warmup = parse_count(optarg, "warmup", 0); break;
		case 'T': {
			char *end = NULL;

			o->cfg.case_seconds = strtod(optarg, &end);
			if (!end || *end || o->cfg.case_seconds <= 0)
				usage_error("--case-seconds expects a positive number, got '%s'", optarg);
			break;
		}
		case 'm': {
			char *end = NULL;

			o->cfg.min_rep_seconds = strtod(optarg, &end);
			if (!end || *end || end == optarg || o->cfg.min_rep_seconds < 0)
				usage_error("--min-rep-seconds expects a number >= 0, got '%s'", optarg);
			break;
		}
		case 'b':
			if (parse_size(optarg, &size) != 0 || size < 512)
				usage_error("--block-size expects a size of at least 512, got '%s'", optarg);
			o->cfg.block_size = size;
			break;
		case 'R': o->cfg.seed = (uint64_t)parse_count(optarg, "seed", 0); break;
		case 'C': o->cpu = strcmp(optarg, "none") == 0 ? -1 : (int)parse_count(optarg, "cpu", 0); break;
		case 'D': o->cfg.data_file = optarg; break;
		case 'A': o->aging_state = optarg; break;
		case 'P': o->progress_fd = (int)parse_count(optarg, "progress-fd", 0); break;
		case 'd': o->dry_run = 1; break;
		case 'l': o->list = 1; break;
		case 'V': printf("fsbench %s\n", FSBENCH_VERSION); exit(0);
		case 'h': print_help(); exit(0);
		default:
			if (optopt)
				usage_error("option '%s' needs a value or is not known", argv[optind - 1]);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->list) {
		list_benches();
		exit(0);
	}
	if (!o->cfg.target)
		usage_error("--target DIR is required");
}

/* Defaults that depend on --quick, applied where the user set nothing. */
static void apply_defaults(struct options *o)
{
	struct suite_config *c = &o->cfg;

	if (!c->reps) c->reps = c->quick ? 3 : 5;
	if (!c->rounds || c->rounds > c->reps) c->rounds = c->reps;
	if (!c->ops) c->ops = c->quick ? 256 : 4096;
	if (!c->files) c->files = c->quick ? 1000 : 10000;
	if (!c->file_size) c->file_size = c->quick ? (64ULL << 20) : (256ULL << 20);
	if (c->case_seconds < 0) c->case_seconds = c->quick ? 0.25 : 2.0;
	if (c->min_rep_seconds < 0) c->min_rep_seconds = c->quick ? 0.05 : 0.1;
}

static int wanted(const struct options *o, const struct bench *b)
{
	char *copy, *save = NULL;
	int yes = 0;

	if (!o->only)
		return !b->on_request;
	copy = xstrdup(o->only);
	for (char *tok = strtok_r(copy, ",", &save); tok && !yes; tok = strtok_r(NULL, ",", &save))
		yes = strcmp(tok, b->name) == 0 ||
		      (!b->on_request && strcmp(tok, "meta") == 0 && b->family == FAMILY_META) ||
		      (!b->on_request && strcmp(tok, "data") == 0 && b->family == FAMILY_DATA);
	free(copy);
	return yes;
}

static void check_only_names(const struct options *o)
{
	char *copy, *save = NULL;

	if (!o->only)
		return;
	copy = xstrdup(o->only);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int known = strcmp(tok, "meta") == 0 || strcmp(tok, "data") == 0;

		for (size_t i = 0; i < meta_bench_count && !known; i++)
			known = strcmp(tok, meta_benches[i].name) == 0;
		for (size_t i = 0; i < data_bench_count && !known; i++)
			known = strcmp(tok, data_benches[i].name) == 0;
		if (!known)
			usage_error("--only: '%s' is neither a family (meta, data) nor a benchmark (see --list)", tok);
	}
	free(copy);
}

struct skip {
	char label[160];
	const char *reason;
};

struct plan {
	struct bench_case cases[MAX_CASES];
	size_t ncases;
	struct skip skips[MAX_CASES];   /* not applicable here, with the reason */
	size_t nskips;
	struct skip errors[MAX_CASES];  /* failed while running, with the error */
	size_t nerrors;
	double estimate_seconds;
};

/* What keeps a case from running here, or NULL if it can run. */
static const char *why_not(const struct options *o, const struct bench_case *c, const struct target_facts *t)
{
	int copy = strcmp(c->bench->name, "copy") == 0;

	/* tmpfs keeps everything in the page cache: labelling any of it cold would be false. */
	if (t->memory_only && c->cache == CACHE_COLD)
		return "tmpfs lives in memory: there is no cold state (cold costs are the warm costs)";
	if (t->memory_only && c->cache == CACHE_DIRECT)
		return "tmpfs has no device: O_DIRECT is buffered there, the same as warm";
	if (c->cache == CACHE_COLD && c->bench->family == FAMILY_META && !t->can_drop)
		return "cold metadata needs root to write /proc/sys/vm/drop_caches";
	if (c->cache == CACHE_DIRECT && !t->direct_ok)
		return "the filesystem refuses O_DIRECT";
	if (c->cache == CACHE_DIRECT && c->size % 512 != 0)
		return "O_DIRECT needs request sizes that are multiples of 512 bytes";
	if (c->bench->family == FAMILY_DATA && c->size > o->cfg.file_size)
		return "request size larger than the data file";
	if (!copy && c->size > MAX_REQUEST_BYTES)
		return "a request stops at 64M (only copy, which copies a whole file, goes beyond)";
	/* A source and its copy, which a filesystem that cannot share extents writes out whole. */
	if (copy && c->size > t->free_bytes / 2)
		return "a copy needs twice its size free (its source and the copy), more than the target has";
	return NULL;
}

static void add_case(struct plan *p, const struct options *o, struct bench_case *c, const struct target_facts *t)
{
	const char *reason = why_not(o, c, t);

	if (p->ncases == MAX_CASES || p->nskips == MAX_CASES)
		usage_error("the plan has more than %d cases; narrow it with --only or --sizes", MAX_CASES);
	if (reason) {
		case_label(c, p->skips[p->nskips].label, sizeof(p->skips[p->nskips].label));
		p->skips[p->nskips++].reason = reason;
		return;
	}
	p->cases[p->ncases++] = *c;
}

/*
 * Upper-bound estimate, so the full suite can say how long it takes before it starts:
 * every case spends at most its budget timing, plus building its tree or file.
 */
static double estimate_case(const struct options *o, const struct bench_case *c)
{
	const struct suite_config *cfg = &o->cfg;
	double setups = c->bench->reusable ? (double)cfg->rounds : (double)cfg->reps;
	double seconds = cfg->case_seconds;

	if (c->cache == CACHE_WARM && c->bench->reusable && cfg->min_rep_seconds * (double)cfg->reps > seconds)
		seconds = cfg->min_rep_seconds * (double)cfg->reps;

	if (c->bench->family == FAMILY_META) {
		seconds += setups * (double)meta_files_made(c->bench, cfg) * 30e-6;
		if (c->cache == CACHE_COLD)
			seconds += (double)cfg->reps * 0.3;
	} else if (c->cache != CACHE_WARM) {
		seconds += (double)cfg->reps * 0.05;
	}
	if (c->order == ORDER_FORWARD) /* measured whole, past the budget: at most ~200 us a read */
		seconds += (double)cfg->reps * FORWARD_READS * 200e-6;
	return seconds;
}

static int compare_sizes(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The default request sizes: powers of two from 512 B to 1 MiB plus d-1, d and d+1,
 * where Park and Lipton's ceil(b/d) steps (DESIGN: sweep around block multiples).
 */
static size_t default_sizes(uint64_t d, int quick, uint64_t *out)
{
	static const uint64_t full[] = { 512, 1024, 2048, 8192, 16384, 32768, 65536, 131072,
					 262144, 524288, 1048576 };
	static const uint64_t brief[] = { 512, 65536, 1048576 };
	const uint64_t *base = quick ? brief : full;
	size_t nbase = quick ? 3 : 11, n = 0, kept = 0;

	for (size_t i = 0; i < nbase; i++)
		out[n++] = base[i];
	out[n++] = d - 1;
	out[n++] = d;
	out[n++] = d + 1;
	qsort(out, n, sizeof(*out), compare_sizes);
	for (size_t i = 0; i < n; i++)
		if (kept == 0 || out[i] != out[kept - 1])
			out[kept++] = out[i];
	return kept;
}

/* The request sizes swept: --sizes (refused here, before any work directory is made, where
 * a value is not a size), else the defaults at the block size. */
static void set_sizes(struct options *o)
{
	uint64_t d = o->cfg.block_size;

	o->nsizes = o->sizes_text
		? parse_byte_list(o->sizes_text, "sizes", "request size", d, 1, MAX_COPY_BYTES, MAX_SIZES, o->sizes)
		: default_sizes(d, o->cfg.quick, o->sizes);
}

static void build_plan(struct plan *p, const struct options *o, const struct target_facts *facts)
{
	const struct bench *tables[] = { meta_benches, data_benches };
	const size_t counts[] = { meta_bench_count, data_bench_count };
	uint64_t d = o->cfg.block_size, sync_sizes[3] = { d, 65536, 1048576 };
	const uint64_t *sizes = o->sizes;
	uint64_t written_sizes[2] = { d, 65536 };
	uint64_t mix_mean = mean_u64(o->cfg.file_sizes, o->cfg.nfile_sizes);
	uint64_t request_mean = mean_u64(o->cfg.request_sizes, o->cfg.nrequest_sizes);
	size_t nsizes = o->nsizes, nsync = o->cfg.quick ? 1 : 3;

	/* A mix's case is named by its mean, at least a byte (a mix of empty files too). */
	if (o->cfg.nfile_sizes && !mix_mean)
		mix_mean = 1;

	if (o->sizes_text) {
		memcpy(sync_sizes, sizes, sizeof(uint64_t) * (nsizes < 3 ? nsizes : 3));
		nsync = nsizes < 3 ? nsizes : 3;
	}
	memset(p, 0, sizeof(*p));
	for (size_t t = 0; t < 2; t++) {
		for (size_t i = 0; i < counts[t]; i++) {
			const struct bench *b = &tables[t][i];
			const uint64_t *sz = b->sweep == SWEEP_SYNC ? sync_sizes
					   : b->sweep == SWEEP_WRITTEN ? written_sizes
					   : b->sweep == SWEEP_MIX ? &mix_mean
					   : b->sweep == SWEEP_MIX_REQUESTS ? &request_mean : sizes;
			size_t nsz = b->sweep == SWEEP_NONE ? 1 : b->sweep == SWEEP_SYNC ? nsync
				   : b->sweep == SWEEP_WRITTEN ? 2 : at_mix(b) ? 1 : nsizes;

			if (!wanted(o, b) || (at_mix(b) && !o->cfg.nfile_sizes)
			    || (b->sweep == SWEEP_MIX_REQUESTS && !o->cfg.nrequest_sizes))
				continue;
			for (size_t s = 0; s < nsz; s++)
				for (unsigned ord = ORDER_SEQ; ord <= ORDER_FORWARD; ord <<= 1)
					for (unsigned cm = CACHE_COLD; cm <= CACHE_DIRECT; cm <<= 1) {
						struct bench_case c = { b, b->sweep == SWEEP_NONE ? 0 : sz[s],
									(enum order)ord, (enum cache_mode)cm, 0 };

						if (!(b->orders & ord & o->orders) || !(b->caches & cm & o->caches))
							continue;
						if (ord != ORDER_FORWARD) {
							add_case(p, o, &c, facts);
							continue;
						}
						/* What readahead does for gapped reads is only seen
						 * from a cold cache: warm or direct, forward is random. */
						if (cm != CACHE_COLD)
							continue;
						for (size_t g = 0; g < o->ngaps; g++) {
							c.gap = o->gaps[g];
							add_case(p, o, &c, facts);
						}
					}
		}
	}
	for (size_t i = 0; i < p->ncases; i++)
		p->estimate_seconds += estimate_case(o, &p->cases[i]);
}


static int probe_direct_io(int workdir_fd)
{
	int fd = openat(workdir_fd, "direct-probe", O_CREAT | O_RDWR | O_DIRECT | O_CLOEXEC, 0644);

	if (fd < 0)
		return 0;
	close(fd);
	unlinkat(workdir_fd, "direct-probe", 0);
	return 1;
}

/*
 * Pin to CPU `requested` (--cpu N), or where it is -2 to the last one allowed: here the one
 * the block device's interrupts land on, where a program waiting for a read is woken (cold
 * 32 KiB random reads on btrfs cost 1.4 times as much unpinned, and the development set's
 * reads were priced nearer pinned).  Unlinks on xfs cost more unpinned (docs/model-evidence.md,
 * "Three more programs neither set has: rm -rf, sha256sum, git gc").  The CPU, or -1 where
 * not pinned (--cpu none).
 */
static int pick_cpu(int requested)
{
	cpu_set_t allowed, one;
	int chosen = requested;

	if (requested == -1)
		return -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return -1;
	if (requested == -2)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				chosen = c;
	if (chosen < 0 || !CPU_ISSET(chosen, &allowed))
		usage_error("--cpu %d is not a CPU this process may run on", requested);
	CPU_ZERO(&one);
	CPU_SET(chosen, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0) {
		fail_errno("sched_setaffinity", NULL);
		return -1;
	}
	return chosen;
}

static void iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static FILE *open_output(const struct options *o)
{
	if (o->json_path && !o->force && access(o->json_path, F_OK) == 0)
		usage_error("--json %s exists; choose another name or pass --force", o->json_path);
	return report_open(o->json_path);
}

static void write_config(struct json *j, const struct options *o, const struct plan *p)
{
	const struct suite_config *c = &o->cfg;

	json_key(j, "config");
	json_begin_object(j);
	json_kv_string(j, "target", c->target);
	json_kv_bool(j, "quick", c->quick);
	json_kv_string(j, "only", o->only);
	json_kv_u64(j, "reps", c->reps);
	json_kv_u64(j, "rounds", c->rounds);
	json_kv_u64(j, "ops", c->ops);
	json_kv_u64(j, "files", c->files);
	json_kv_u64(j, "file_size", c->file_size);
	json_kv_i64(j, "warmup", c->warmup);
	json_kv_double(j, "case_seconds", c->case_seconds);
	json_kv_double(j, "min_rep_seconds", c->min_rep_seconds);
	json_kv_u64(j, "block_size", c->block_size);
	json_kv_u64_array(j, "gaps", o->gaps, o->ngaps);
	json_kv_u64(j, "seed", c->seed);
	json_kv_string(j, "data_file", c->data_file);
	/* Declared so a reader knows how each data repetition started (data.c). */
	json_kv_bool(j, "syncfs_before_data_reps", 1);
	json_kv_u64(j, "cases", p->ncases);
	json_kv_double(j, "estimated_seconds", p->estimate_seconds);
	json_end_object(j);
}

static void write_case_list(struct json *j, const char *key, const struct skip *list, size_t n)
{
	json_key(j, key);
	json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		json_begin_object(j);
		json_kv_string(j, "case", list[i].label);
		json_kv_string(j, "reason", list[i].reason);
		json_end_object(j);
	}
	json_end_array(j);
}

static void progress(int fd, size_t done, size_t total, const char *label)
{
	if (fd >= 0)
		dprintf(fd, "progress %zu %zu %s\n", done, total, label);
}

/* A target that is not a writable directory is a bad argument, refused before anything runs. */
static void check_target(const char *target)
{
	struct stat st;

	if (stat(target, &st) != 0)
		usage_error("--target %s: %s", target, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		usage_error("--target %s is not a directory", target);
	if (access(target, W_OK | X_OK) != 0)
		usage_error("--target %s is not a directory this user may write", target);
}

/* Make <target>/fsbench.XXXXXX and its shared/ directory; everything fsbench does is inside. */
static void make_workdir(struct suite_config *cfg)
{
	snprintf(cfg->workdir, sizeof(cfg->workdir), "%s/fsbench.XXXXXX", cfg->target);
	if (!mkdtemp(cfg->workdir))
		die("mkdtemp(%s): %s", cfg->workdir, strerror(errno));
	cfg->workdir_fd = open(cfg->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cfg->workdir_fd < 0 || mkdirat(cfg->workdir_fd, "shared", 0755) != 0)
		die("preparing %s: %s", cfg->workdir, strerror(errno));
	cfg->shared_fd = openat(cfg->workdir_fd, "shared", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cfg->shared_fd < 0)
		die("opening %s/shared: %s", cfg->workdir, strerror(errno));
}

static int remove_workdir(struct suite_config *cfg)
{
	char *slash = strrchr(cfg->workdir, '/');
	int parent = open(cfg->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	close(cfg->shared_fd);
	close(cfg->workdir_fd);
	if (parent < 0)
		return fail_errno("open", cfg->target);
	rc = remove_tree_at(parent, slash + 1);
	close(parent);
	return rc;
}

/* Round `round`'s share of `reps` repetitions over `rounds`: the first rounds take one more
 * where they do not divide evenly. */
static size_t reps_in_round(size_t reps, size_t rounds, size_t round)
{
	return reps / rounds + (round < reps % rounds);
}

/*
 * Every case in rounds (--rounds), then each one's result in the plan's order.  The first
 * round takes the cases in the plan's order; each later one in an order of its own drawn
 * from the seed, so a case's repetitions fall in different minutes of the host (whose
 * speed drifts) and after different cases (what a case follows moves some of them, such
 * as btrfs's creates among written files).  A case that fails leaves the later rounds and
 * is reported among the errors, with no result.  Returns the failures.
 */
static size_t run_rounds(const struct options *o, struct plan *plan, const struct clock_costs *clock,
			 struct json *j)
{
	size_t n = plan->ncases, total = n * o->cfg.rounds, done = 0, failures = 0;
	struct case_run **runs = xcalloc(n, sizeof(*runs));
	size_t *order = xcalloc(n ? n : 1, sizeof(*order));
	char *failed = xcalloc(n ? n : 1, 1);
	char label[160];

	for (size_t i = 0; i < n; i++)
		runs[i] = case_run_new(&o->cfg, &plan->cases[i]);
	for (size_t round = 0; round < o->cfg.rounds && !stop_requested; round++) {
		struct rng rng;

		rng_seed(&rng, o->cfg.seed ^ (0x726f756e64ULL + round)); /* "round" */
		make_order(order, n, round > 0, &rng);
		for (size_t k = 0; k < n && !stop_requested; k++, done++) {
			size_t i = order[k];

			if (failed[i])
				continue;
			case_label(&plan->cases[i], label, sizeof(label));
			progress(o->progress_fd, done, total, label);
			if (case_run_round(runs[i], reps_in_round(o->cfg.reps, o->cfg.rounds, round), clock) != 0) {
				/* Keep the message for the errors list written after the results. */
				snprintf(plan->errors[plan->nerrors].label, sizeof(plan->errors[0].label), "%s", label);
				plan->errors[plan->nerrors++].reason = xstrdup(last_error());
				failed[i] = 1;
				failures++;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!failed[i])
			case_run_write(runs[i], j);
		case_run_free(runs[i]);
	}
	free(runs);
	free(order);
	free(failed);
	return failures;
}

int main(int argc, char **argv)
{
	struct options o;
	struct environment env;
	static struct plan plan;
	struct target_facts facts;
	struct json j;
	char started[32], finished[32], label[160];
	size_t failures;
	FILE *out;

	parse_options(argc, argv, &o);
	check_only_names(&o);
	check_target(o.cfg.target);
	apply_defaults(&o);
	if (environment_probe(&env, o.cfg.target) != 0)
		return EXIT_RUNTIME;
	if (!o.cfg.block_size)
		o.cfg.block_size = env.fs_block_size;
	set_sizes(&o);
	env.pinned_cpu = pick_cpu(o.cpu);
	snprintf(env.aging_state, sizeof(env.aging_state), "%s", o.aging_state);
	/* From here on the target holds our work directory: a stop, or a reader of the plan line
	 * that went away, ends the run with it removed rather than killing us beside it. */
	stop_on_signals();
	make_workdir(&o.cfg);
	facts = (struct target_facts){ .direct_ok = probe_direct_io(o.cfg.workdir_fd), .can_drop = cache_can_drop_all(),
				       .memory_only = strcmp(env.fs_type, "tmpfs") == 0 || strcmp(env.fs_type, "ramfs") == 0,
				       .free_bytes = env.fs_free_bytes };
	build_plan(&plan, &o, &facts);
	fprintf(stderr, "fsbench: %zu cases (%zu not applicable here), %zu repetitions of at most %g s each in %zu "
		"rounds, estimated at most %.0f s\n", plan.ncases, plan.nskips, o.cfg.reps, o.cfg.case_seconds,
		o.cfg.rounds, plan.estimate_seconds);
	if (o.dry_run) {
		for (size_t i = 0; i < plan.ncases; i++) {
			case_label(&plan.cases[i], label, sizeof(label));
			printf("%s\n", label);
		}
		for (size_t i = 0; i < plan.nskips; i++)
			printf("skip %s: %s\n", plan.skips[i].label, plan.skips[i].reason);
		return remove_workdir(&o.cfg) == 0 ? 0 : EXIT_RUNTIME;
	}
	env.clock.timer_ns = timer_overhead_ns();
	env.clock.cpu_ns = cpu_overhead_ns();
	out = open_output(&o);
	json_init(&j, out);
	iso_now(started, sizeof(started));
	json_begin_object(&j);
	json_kv_u64(&j, "schema_version", SCHEMA_VERSION);
	json_kv_string(&j, "tool", "fsbench");
	json_kv_string(&j, "version", FSBENCH_VERSION);
	json_kv_string(&j, "started", started);
	write_config(&j, &o, &plan);
	json_key(&j, "environment");
	environment_write_json(&env, &j);
	json_key(&j, "results");
	json_begin_array(&j);
	failures = run_rounds(&o, &plan, &env.clock, &j);
	progress(o.progress_fd, plan.ncases * o.cfg.rounds, plan.ncases * o.cfg.rounds, "done");
	json_end_array(&j);
	write_case_list(&j, "skipped", plan.skips, plan.nskips);
	write_case_list(&j, "errors", plan.errors, plan.nerrors);
	json_kv_bool(&j, "interrupted", stop_requested != 0);
	iso_now(finished, sizeof(finished));
	json_kv_string(&j, "finished", finished);
	json_end_object(&j);
	if (remove_workdir(&o.cfg) != 0)
		failures++;
	if (report_close(out, o.json_path) != 0)
		return EXIT_RUNTIME;
	if (stop_requested) {
		fprintf(stderr, "fsbench: interrupted; partial results kept\n");
		return 130;
	}
	return failures ? EXIT_RUNTIME : 0;
}
