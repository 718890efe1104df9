/*
 * fsage.c - age a filesystem the way Tang's appendix E does, and measure the outcome.
 *
 * Lay down a tree of files (sizes from a list, or Impressions' log-normal: Agrawal et al.
 * 2009, mu 9.48, sigma 2.46 bytes), optionally until the filesystem is X% full; then for
 * each round delete half the files in random order and recreate them, then a quarter, ...
 * down to 1/64.  Layout (FIEMAP) and free space (GETFSMAP) are measured before and after.
 * Deterministic for a --seed.  Ctrl-C stops between files: every file is whole or absent.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "layout.h"
#include "util.h"

enum { CHUNK = 1 << 20, FILES_PER_DIR = 64, FRACTIONS = 6 };

struct options {
	const char *target, *output, *sizes;
	uint64_t files, max_file, seed;
	unsigned rounds;
	double fill_pct;
	int progress_fd, measure_only;
};

struct tree {
	uint64_t *size;
	size_t n, cap;
	uint64_t bytes;
};


static void usage(FILE *out)
{
	fputs("Usage: fsage --target DIR [--rounds N] [--files N | --fill PCT] [--sizes FILE]\n"
	      "             [--max-file SIZE] [--seed N] [--output FILE] [--progress-fd N]\n"
	      "       fsage --target DIR --measure-only\n"
	      "Lays a tree of files down in the empty DIR, ages it (Tang, appendix E: delete half the\n"
	      "files in random order and recreate them, then a quarter, ... 1/64; per round) and writes\n"
	      "JSON with the layout before and after (FIEMAP extents, layout score, free space).\n", out);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "target", required_argument, NULL, 't' }, { "rounds", required_argument, NULL, 'r' },
		{ "files", required_argument, NULL, 'n' }, { "fill", required_argument, NULL, 'f' },
		{ "sizes", required_argument, NULL, 's' }, { "max-file", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 'S' }, { "output", required_argument, NULL, 'o' },
		{ "progress-fd", required_argument, NULL, 'P' }, { "measure-only", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 },
	};
	char *end;
	int c;

	*o = (struct options){ .rounds = 10, .max_file = 64 << 20, .seed = 1, .progress_fd = -1 };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't': o->target = optarg; break;
		case 'o': o->output = optarg; break;
		case 's': o->sizes = optarg; break;
		case 'M': o->measure_only = 1; break;
		case 'P': o->progress_fd = atoi(optarg); break;
		case 'r':
			o->rounds = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->rounds > 1000)
				usage_error("--rounds must be 0..1000");
			break;
		case 'n':
			o->files = strtoull(optarg, &end, 10);
			if (*end || !o->files)
				usage_error("--files must be a positive number");
			break;
		case 'f':
			o->fill_pct = strtod(optarg, &end);
			if (*end || o->fill_pct <= 0 || o->fill_pct > 98)
				usage_error("--fill must be a percentage in (0, 98]");
			break;
		case 'm':
			if (parse_size(optarg, &o->max_file) != 0 || o->max_file == 0)
				usage_error("--max-file: not a size: '%s'", optarg);
			break;
		case 'S':
			o->seed = strtoull(optarg, &end, 10);
			if (*end)
				usage_error("--seed must be a number");
			break;
		case 'h': usage(stdout); exit(0);
		default: usage_error("unknown option");
		}
	}
	if (!o->target)
		usage_error("--target is required");
	if (optind != argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->files && o->fill_pct > 0)
		usage_error("give --files or --fill, not both");
}

static void tree_add(struct tree *t, uint64_t size)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->size = realloc(t->size, t->cap * sizeof(*t->size));
		if (!t->size)
			die("out of memory");
	}
	t->size[t->n++] = size;
	t->bytes += size;
}

/* Impressions' file sizes: log-normal, mu 9.48, sigma 2.46 (bytes), capped. */
static uint64_t lognormal_size(struct rng *r, uint64_t cap)
{
	double u1 = ((double)(rng_next(r) >> 11) + 1.0) / 9007199254740993.0;
	double u2 = (double)(rng_next(r) >> 11) / 9007199254740992.0;
	double normal = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
	double size = exp(9.48 + 2.46 * normal);

	return size > (double)cap ? cap : (uint64_t)size;
}

static int read_sizes(const char *path, struct tree *t, uint64_t cap)
{
	FILE *in = fopen(path, "r");
	char line[4096];
	size_t number = 0;

	if (!in)
		return fail_errno("open", path);
	while (fgets(line, sizeof(line), in)) {
		char *end;
		unsigned long long size;

		number++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		errno = 0;
		size = strtoull(line, &end, 10);
		if (errno || end == line || (*end && *end != '\n' && *end != '\t' && *end != ' ')) {
			fclose(in);
			return fail_msg("%s:%zu: expected a file size in bytes at the start of the line", path, number);
		}
		tree_add(t, size > cap ? cap : size);
	}
	fclose(in);
	return t->n ? 0 : fail_msg("%s: no file sizes in it", path);
}

static void file_name(char *buf, size_t len, size_t i)
{
	snprintf(buf, len, "d%04zu/f%07zu", i / FILES_PER_DIR, i);
}

/* Write one file whole; on failure remove what was written, so the tree stays consistent. */
static int write_file(int root, size_t i, uint64_t size, const char *chunk)
{
	char name[64], dir[32];
	int fd;

	file_name(name, sizeof(name), i);
	snprintf(dir, sizeof(dir), "d%04zu", i / FILES_PER_DIR);
	if (mkdirat(root, dir, 0755) != 0 && errno != EEXIST)
		return fail_errno("mkdir", dir);
	fd = openat(root, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail_errno("create", name);
	for (uint64_t done = 0; done < size;) {
		size_t n = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
		ssize_t w = write(fd, chunk, n);

		if (w <= 0) {
			int saved = w < 0 ? errno : ENOSPC;
			close(fd);
			unlinkat(root, name, 0);
			errno = saved;
			return -1;
		}
		done += (uint64_t)w;
	}
	return close(fd);
}

/* Lay the tree down; with --fill, keep adding files until the filesystem is that full. */
static int lay_down(int root, const struct options *o, struct tree *t, struct rng *r, const char *chunk)
{
	struct statvfs vfs;
	uint64_t target = 0, used;

	if (fstatvfs(root, &vfs) != 0)
		return fail_errno("statvfs", o->target);
	used = (uint64_t)(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize;
	if (o->fill_pct > 0) {
		target = (uint64_t)(o->fill_pct / 100.0 * (double)vfs.f_blocks * (double)vfs.f_frsize);
		if (target <= used)
			return fail_msg("%s is already %.0f%% full; --fill %.0f adds nothing", o->target,
					100.0 * (double)used / ((double)vfs.f_blocks * (double)vfs.f_frsize), o->fill_pct);
		while (used + t->bytes < target)
			tree_add(t, lognormal_size(r, o->max_file));
		t->bytes -= t->size[--t->n]; /* the last one overshot */
	} else if (!t->n) {
		for (uint64_t i = 0; i < (o->files ? o->files : 1000); i++)
			tree_add(t, lognormal_size(r, o->max_file));
	}
	for (size_t i = 0; i < t->n && !stop_requested; i++) {
		if (write_file(root, i, t->size[i], chunk) != 0)
			return errno == ENOSPC ? fail_msg("the filesystem filled up laying down file %zu of %zu; use a "
							  "smaller --fill or --files", i + 1, t->n) : -1;
		if (i % 64 == 0)
			report_progress(o->progress_fd, i, t->n);
	}
	return 0;
}

/*
 * Tang's appendix E, one round: 1/2, 1/4, ... 1/64 of the files deleted in random order,
 * then recreated (same names and sizes) in a new random order.  A stop request is honoured
 * only between steps, after the recreation, so the tree is whole when fsage stops.
 */
static int age_round(int root, const struct options *o, const struct tree *t, struct rng *r, const char *chunk,
		     uint64_t *done, uint64_t total)
{
	size_t *pick = xcalloc(t->n ? t->n : 1, sizeof(size_t)), *again = xcalloc(t->n ? t->n : 1, sizeof(size_t));
	char name[64];
	int rc = 0;

	for (int f = 1; f <= FRACTIONS && !stop_requested && rc == 0; f++) {
		size_t k = t->n >> f;

		make_order(pick, t->n, 1, r);
		for (size_t i = 0; i < k && rc == 0; i++) {
			file_name(name, sizeof(name), pick[i]);
			if (unlinkat(root, name, 0) != 0)
				rc = fail_errno("unlink", name);
		}
		make_order(again, k, 1, r);
		for (size_t i = 0; i < k && rc == 0; i++) {
			size_t file = pick[again[i]];
			rc = write_file(root, file, t->size[file], chunk);
		}
		*done += 2 * k;
		report_progress(o->progress_fd, *done, total);
	}
	free(pick);
	free(again);
	return rc;
}

static uint64_t steps_per_round(size_t n)
{
	uint64_t steps = 0;

	for (int f = 1; f <= FRACTIONS; f++)
		steps += 2 * (n >> f);
	return steps;
}

static int measure(int root, struct layout *l)
{
	if (layout_measure(root, l) != 0)
		return fail_msg("measuring the layout failed");
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct tree t = { 0 };
	struct layout before, after;
	struct rng r;
	struct json j;
	FILE *out;
	char *chunk;
	unsigned rounds_done = 0;
	uint64_t done = 0, start;
	int root;

	program_name = "fsage";
	parse_options(argc, argv, &opt);
	stop_on_signals();
	root = open(opt.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fail_errno("open target directory", opt.target);
		return EXIT_USAGE;
	}
	out = report_open(opt.output);
	json_init(&j, out);
	json_begin_object(&j);
	json_kv_u64(&j, "schema_version", 1);
	json_kv_string(&j, "kind", opt.measure_only ? "layout" : "aging");
	json_kv_string(&j, "target", opt.target);
	if (opt.measure_only) {
		if (measure(root, &after) != 0)
			return EXIT_RUNTIME;
		layout_write_json(&j, "layout", &after);
		json_end_object(&j);
		fputc('\n', out);
		return report_close(out, opt.output);
	}
	if (require_empty_dir(opt.target, "fsage lays its tree down only in an empty directory") != 0)
		return EXIT_USAGE;
	if (opt.sizes && read_sizes(opt.sizes, &t, opt.max_file) != 0)
		return EXIT_USAGE;
	rng_seed(&r, opt.seed);
	chunk = xaligned(4096, CHUNK);
	for (size_t i = 0; i < CHUNK / 8; i++)
		((uint64_t *)chunk)[i] = rng_next(&r); /* incompressible */
	start = now_ns();
	if (lay_down(root, &opt, &t, &r, chunk) != 0 || measure(root, &before) != 0)
		return EXIT_RUNTIME;
	uint64_t total = opt.rounds * steps_per_round(t.n);
	for (; rounds_done < opt.rounds && !stop_requested; rounds_done++)
		if (age_round(root, &opt, &t, &r, chunk, &done, total) != 0)
			return EXIT_RUNTIME;
	if (syncfs(root) != 0 || measure(root, &after) != 0)
		return EXIT_RUNTIME;
	json_kv_u64(&j, "seed", opt.seed);
	json_kv_u64(&j, "files", t.n);
	json_kv_u64(&j, "bytes", t.bytes);
	json_kv_double(&j, "fill_pct_target", opt.fill_pct);
	json_kv_u64(&j, "rounds", opt.rounds);
	json_kv_u64(&j, "rounds_completed", rounds_done);
	json_kv_bool(&j, "interrupted", rounds_done < opt.rounds);
	json_kv_double(&j, "seconds", (double)(now_ns() - start) / 1e9);
	layout_write_json(&j, "before", &before);
	layout_write_json(&j, "after", &after);
	json_end_object(&j);
	fputc('\n', out);
	if (report_close(out, opt.output) != 0)
		return EXIT_RUNTIME;
	free(chunk);
	free(t.size);
	return rounds_done < opt.rounds ? EXIT_RUNTIME : 0;
}
