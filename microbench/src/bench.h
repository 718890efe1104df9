/*
 * bench.h - what a benchmark is.  Each benchmark is a descriptor in one table
 * (meta.c, data.c): the dimension it isolates and four callbacks.  The runner
 * (runner.c) owns timing, repetitions, warm-up and cache state, so adding a benchmark
 * means adding a descriptor, never editing a switch.
 */
#ifndef FSBENCH_BENCH_H
#define FSBENCH_BENCH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "tree.h"
#include "util.h"

enum family { FAMILY_META = 1, FAMILY_DATA = 2 };
/*
 * Sequential / creation order, a random permutation (a new one every repetition), or
 * forward: a random sample of slots read in ascending order, as sorted lookups read a
 * file (an SQL IN list, a merge join), with a mean gap between one request's end and the
 * next one's start.  Its gaps vary as a sorted sample's do (some are zero), and that is
 * what readahead reacts to: the consecutive pairs start a window the next lookups may hit.
 */
enum order { ORDER_SEQ = 1, ORDER_RANDOM = 2, ORDER_FORWARD = 4 };
/* Reads in one forward repetition (at least: more if --ops asks), measured whole. */
enum { FORWARD_READS = 4096 };
/* Which sizes a benchmark sweeps by default: request sizes (data), a sync's bytes, the
 * bytes written into each file a metadata benchmark makes, one case at a workload's mix
 * of such sizes (--file-sizes), or one case at a workload's mix of bytes written into each
 * file and its mix of request sizes (--request-sizes; the case's size: their mean).  A
 * benchmark at a mix runs only where its mixes are given. */
enum size_sweep { SWEEP_NONE, SWEEP_FULL, SWEEP_SYNC, SWEEP_WRITTEN, SWEEP_MIX, SWEEP_MIX_REQUESTS };
/* The most sizes a mix (--file-sizes) holds. */
enum { MAX_FILE_SIZES = 16 };

struct suite_config;
struct bench_ctx;

struct bench {
	const char *name;     /* unique, used by --only */
	enum family family;
	const char *op;       /* DESIGN's operation vocabulary: create, stat, read, ... */
	const char *isolates; /* what this benchmark isolates, for people reading results */
	unsigned orders;      /* ORDER_* it runs in */
	unsigned caches;      /* CACHE_* it runs in */
	enum size_sweep sweep;
	int reusable;         /* setup once per case (it leaves the tree unchanged) */
	int variant;          /* a small switch for descriptors sharing callbacks */
	/* Untimed: build what the timed operations need; sets ctx->n (and ctx->norder). */
	int (*setup)(struct bench_ctx *ctx);
	/* Untimed: put caches in the case's declared state. */
	int (*prepare_cache)(struct bench_ctx *ctx);
	int (*before_one)(struct bench_ctx *ctx, size_t i); /* untimed, optional */
	int (*run_one)(struct bench_ctx *ctx, size_t i);    /* exactly one timed operation */
	int (*after_one)(struct bench_ctx *ctx, size_t i);  /* untimed, optional */
	void (*teardown)(struct bench_ctx *ctx);            /* optional: close what setup opened */
	/* Untimed, optional: before each pass of a warm repetition after its first. */
	int (*between_passes)(struct bench_ctx *ctx);
	/* Runs only where --only names it: a case measured at a workload's own shape
	 * (`fsbm bench --for`), which no table of fsbench's own defaults needs. */
	int on_request;
};

/* One point of the sweep: a benchmark at one size, order and cache state. */
struct bench_case {
	const struct bench *bench;
	uint64_t size; /* request size in bytes, 0 for metadata; a mix's mean (SWEEP_MIX) */
	enum order order;
	enum cache_mode cache;
	uint64_t gap;  /* forward order: mean bytes skipped between requests; else 0 */
};

struct suite_config {
	const char *target;
	int workdir_fd;            /* the suite's own directory beneath target */
	char workdir[PATH_MAX];
	int quick;
	uint64_t block_size;       /* d in Park and Lipton's model */
	uint64_t file_size;        /* F: data file size */
	size_t ops;                /* timed operations per repetition (data) */
	size_t files;              /* entries per hierarchy (metadata) */
	size_t reps;
	size_t rounds;             /* the suite's passes over its cases, each some of every case's reps */
	long warmup;               /* per repetition; -1 = automatic */
	double case_seconds;       /* timed-work budget of one case: a cap */
	double min_rep_seconds;    /* warm repetitions on an unchanged tree last at least this */
	uint64_t seed;
	const char *data_file;     /* an existing file for read benchmarks, or NULL */
	int shared_fd;             /* the suite's shared-files directory */
	/* A workload's mix of bytes written into the files it makes (--file-sizes): file i of a
	 * benchmark at a mix (at_mix) gets file_sizes[i % nfile_sizes]. */
	uint64_t file_sizes[MAX_FILE_SIZES];
	size_t nfile_sizes;
	/* A workload's mix of request sizes (--request-sizes): write k of a SWEEP_MIX_REQUESTS
	 * benchmark, or of the bytes a SWEEP_SYNC benchmark makes durable, is at most
	 * request_sizes[k % nrequest_sizes] bytes (takes_request_sizes). */
	uint64_t request_sizes[MAX_FILE_SIZES];
	size_t nrequest_sizes;
};

/* State of one case while it runs; callbacks keep what they need here. */
struct bench_ctx {
	const struct suite_config *cfg;
	const struct bench_case *c;
	int dirfd;             /* the case's own directory */
	size_t n;              /* operations per repetition */
	size_t norder;         /* length of `order` (>= n) */
	size_t stream_reads;   /* forward order: the reads a stream aims at (n: those it drew) */
	size_t pass;           /* a warm repetition's pass over its n operations, from 0 */
	size_t pass_span;      /* slots later passes go on through (0: the same n again) */
	size_t *order;         /* identity or a random permutation, remade every repetition */
	struct tree tree;
	int fd;                /* the data file, -1 when closed */
	char path[PATH_MAX + 64]; /* its name, for messages */
	uint64_t file_bytes;   /* its size */
	uint64_t stride;       /* offset slot size: size rounded up to the block size */
	unsigned char *buf;
	size_t entries_per_op; /* readdir: entries each operation returns */
	uint64_t listed_bytes_per_op; /* readdir: the bytes getdents64 returns for them */
	int pending_fd;        /* open/close: the descriptor between before_one and after_one */
	size_t file_index;     /* write_new_mix: the file being written, */
	uint64_t file_done;    /* and the bytes written into it so far */
	int listed_fd;         /* stat_listed_mix: the directory being walked (-1: none), */
	char *names;           /* its files' names in listing order, each ending in NUL, */
	size_t names_len, names_cap, next_name; /* their bytes, room, and the next one's offset */
	size_t read_bytes;     /* read_listed_mix: what each first read asks for (the mix's largest) */
};

/* The offset of operation i of the current pass: consecutive for sequential, a permuted
 * slot for random, an ascending one for forward (make_forward_stream).  A later pass goes
 * on where the last one stopped, wrapping after pass_span slots. */
uint64_t data_offset(const struct bench_ctx *ctx, size_t i);

/* The largest request a case makes: its size, or the largest of the workload's mix it
 * writes or reads in (SWEEP_MIX: --file-sizes; SWEEP_MIX_REQUESTS: --request-sizes). */
uint64_t buffer_bytes(const struct bench_ctx *ctx);
/* ctx->buf, filled, buffer_bytes long. */
void fill_write_buffer(struct bench_ctx *ctx);

/* Whether a benchmark runs at a workload's mix of sizes (--file-sizes). */
static inline int at_mix(const struct bench *b)
{
	return b->sweep == SWEEP_MIX || b->sweep == SWEEP_MIX_REQUESTS;
}

/* Whether a benchmark's case, given a workload's request sizes, writes in them: a sync's
 * bytes are written as the workload wrote them where it says how (else in one request). */
static inline int takes_request_sizes(const struct bench *b, const struct suite_config *cfg)
{
	return b->sweep == SWEEP_MIX_REQUESTS || (b->sweep == SWEEP_SYNC && cfg->nrequest_sizes);
}

/* The bytes write k asks for where a case writes in a workload's request sizes: cycled. */
static inline uint64_t request_size(const struct suite_config *cfg, size_t k)
{
	return cfg->request_sizes[k % cfg->nrequest_sizes];
}

extern const struct bench meta_benches[];
extern const size_t meta_bench_count;
/* The entries a metadata benchmark's setup makes: --files, or a listing's directories'. */
size_t meta_files_made(const struct bench *b, const struct suite_config *cfg);
extern const struct bench data_benches[];
extern const size_t data_bench_count;

#endif
