/*
 * util.h - small helpers every fsbench file needs: error reporting that names the
 * path and errno, checked allocation, size parsing, and a seeded random source.
 */
#ifndef FSBENCH_UTIL_H
#define FSBENCH_UTIL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The name errors start with: "fsbench" unless a tool's main() sets its own. */
extern const char *program_name;

/* Exit codes: 2 for a usage error (bad arguments), 1 for a failure while running. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Print "fsbench: <what>: <strerror(errno)>" to stderr; returns -1 so callers can `return fail(...)`. */
int fail_errno(const char *what, const char *path);
/* Print "fsbench: <message>" to stderr and keep it as the last error; returns -1. */
int fail_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last message fail_errno or fail_msg printed, so a result file can carry it too. */
const char *last_error(void);
/* Print "fsbench: <message>" and exit with EXIT_USAGE. */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Print "fsbench: <message>" and exit with EXIT_RUNTIME. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

void *xcalloc(size_t n, size_t size);
void *xaligned(size_t alignment, size_t size);
char *xstrdup(const char *s);

/*
 * Parse "4096", "4k", "64K", "1M", "2G" (powers of 1024) into bytes.  Returns 0 on
 * success, -1 if the text is not a size.  A trailing "mem" suffix ("0.5mem") means a
 * fraction of physical memory, so files can be sized relative to the page cache.
 */
int parse_size(const char *text, uint64_t *out);

/* splitmix64: tiny, fast and good enough to shuffle; seeded so every run repeats. */
struct rng { uint64_t state; };
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Fill perm[0..n) with 0..n-1, shuffled (Fisher-Yates) when `shuffle` is set. */
void make_order(size_t *perm, size_t n, int shuffle, struct rng *r);
size_t make_forward_stream(size_t *slots, size_t n, size_t window, double mean_skip, struct rng *r);

/* Read a small text file (sysfs, procfs) into buf, newline stripped; -1 if unreadable. */
int read_text_file(const char *path, char *buf, size_t len);

/* The median of n values (sorts them in place); 0 for none. */
uint64_t median_u64(uint64_t *values, size_t n);

/* The mean of n values, rounded down; 0 for none. */
uint64_t mean_u64(const uint64_t *values, size_t n);

/* Write "DONE TOTAL\n" on a progress descriptor (fsreplay, fsage); nothing when fd < 0. */
void report_progress(int fd, uint64_t done, uint64_t total);

/* A report (JSON) is written beside its name (PATH.partial-XXXXXX) and renamed into place
 * once whole, so no reader ever finds half of one; exit removes an unfinished one, however
 * the program ended (die() included).  A NULL path is stdout.  One report per program. */
FILE *report_open(const char *path);
/* Put the report in place: 0, or EXIT_RUNTIME (said on stderr) if it could not be written.
 * On stdout it is only flushed. */
int report_close(FILE *out, const char *path);

/* 0 if the directory holds nothing (lost+found aside), else an error saying why it must. */
int require_empty_dir(const char *path, const char *why);

/*
 * Set by SIGINT, SIGTERM or SIGHUP once stop_on_signals() ran: every tool finishes the
 * operation in flight, writes what it has and exits, so Ctrl-C never loses results.
 */
extern volatile sig_atomic_t stop_requested;
void stop_on_signals(void);

#endif
