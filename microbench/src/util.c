/*
 * util.c - error reporting, checked allocation, sizes and random permutations.
 */
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

const char *program_name = "fsbench";
static char last_error_text[1024];

int fail_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error_text, sizeof(last_error_text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", program_name, last_error_text);
	return -1;
}

const char *last_error(void)
{
	return last_error_text;
}

int fail_errno(const char *what, const char *path)
{
	int saved = errno;

	if (path)
		fail_msg("%s(%s): %s", what, path, strerror(saved));
	else
		fail_msg("%s: %s", what, strerror(saved));
	errno = saved;
	return -1;
}

static void vreport(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", program_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", program_name);
	exit(EXIT_USAGE);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	exit(EXIT_RUNTIME);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xaligned(size_t alignment, size_t size)
{
	void *p = NULL;
	int rc = posix_memalign(&p, alignment, size ? size : alignment);

	if (rc != 0)
		die("posix_memalign(%zu, %zu): %s", alignment, size, strerror(rc));
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

static uint64_t physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long page = sysconf(_SC_PAGESIZE);

	return (pages > 0 && page > 0) ? (uint64_t)pages * (uint64_t)page : 0;
}

int parse_size(const char *text, uint64_t *out)
{
	char *end = NULL;
	double value;
	uint64_t scale = 1;

	if (!text || !*text || *text == '-')
		return -1;
	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || value < 0)
		return -1;
	if (strcmp(end, "mem") == 0) {
		scale = physical_memory();
		end += 3;
	} else if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': scale = 1ULL << 10; break;
		case 'm': scale = 1ULL << 20; break;
		case 'g': scale = 1ULL << 30; break;
		default: return -1;
		}
		end++;
		if (tolower((unsigned char)*end) == 'i')
			end++;
		if (tolower((unsigned char)*end) == 'b')
			end++;
	}
	if (*end)
		return -1;
	*out = (uint64_t)(value * (double)scale);
	return 0;
}

void rng_seed(struct rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * A forward stream: at most n ascending slots below `window`, each a geometric number of
 * slots past the one before with mean `mean_skip` (the gaps a sorted uniform sample has).
 * Drawn one after another, so a stream in a shorter window is the longer one's first
 * part: every filesystem reads the same offsets as far as its file goes, whatever room it
 * had for the file.  (A shuffled window sorted was a different sample for every window:
 * ext4 aged, with room for 244 MiB, read a stream with 1100 more readahead hits in 11000
 * than fresh ext4's 256 MiB one, and its forward reads were priced 15% cheaper, run after
 * run, where the programs' reads were not.)  Returns how many slots it drew.
 */
size_t make_forward_stream(size_t *slots, size_t n, size_t window, double mean_skip, struct rng *r)
{
	double log_miss = log1p(-1.0 / (1.0 + mean_skip));
	size_t count = 0;
	double next = 0;

	while (count < n) {
		double u = ((double)(rng_next(r) >> 11) + 1.0) / 9007199254740992.0; /* (0, 1] */

		if (mean_skip > 0)
			next += floor(log(u) / log_miss);
		if (next >= (double)window)
			break;
		slots[count++] = (size_t)next;
		next += 1;
	}
	return count;
}

void make_order(size_t *perm, size_t n, int shuffle, struct rng *r)
{
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	if (!shuffle)
		return;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(rng_next(r) % i);
		size_t tmp = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = tmp;
	}
}

int read_text_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int require_empty_dir(const char *path, const char *why)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int entries = 0;

	if (!d)
		return fail_errno("opendir", path);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "lost+found"))
			entries++;
	closedir(d);
	return entries ? fail_msg("%s is not empty; %s", path, why) : 0;
}

void report_progress(int fd, uint64_t done, uint64_t total)
{
	char line[64];
	int len;

	if (fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%llu %llu\n", (unsigned long long)done, (unsigned long long)total);
	if (write(fd, line, (size_t)len) < 0)
		return; /* the reader went away: progress is only a courtesy */
}

volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void stop_on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A reader that went away (fsbench | head) stops the run the same way: killed by
	 * SIGPIPE, fsbench would leave its work directory beneath the target. */
	sigaction(SIGPIPE, &sa, NULL);
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t median_u64(uint64_t *values, size_t n)
{
	qsort(values, n, sizeof(*values), compare_u64);
	return n ? values[n / 2] : 0;
}

uint64_t mean_u64(const uint64_t *values, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += values[i];
	return n ? sum / n : 0;
}

static char report_partial[4096], report_target[4096];
static int report_placed, report_in_place;

static void remove_unfinished_report(void)
{
	if (report_partial[0] && !report_placed)
		unlink(report_partial);
}

/*
 * A report is written beside its file and renamed over it once whole, so a run that stops
 * part-way leaves no half a report and whatever was there stands.  A symbolic link is
 * followed (its target is replaced, the link stays), and a path that exists and is not a
 * regular file (/dev/null, a FIFO, a terminal) is written in place: renamed over, it would
 * become a file where the device was.
 */
FILE *report_open(const char *path)
{
	struct stat st;
	char *real;
	FILE *out;
	int fd;

	if (!path)
		return stdout;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(out = fopen(path, "w")))
			die("open %s: %s", path, strerror(errno));
		report_in_place = 1;
		return out;
	}
	real = realpath(path, NULL); /* NULL where nothing is there yet: the name as given */
	if ((size_t)snprintf(report_target, sizeof(report_target), "%s", real ? real : path) >= sizeof(report_target) ||
	    (size_t)snprintf(report_partial, sizeof(report_partial), "%s.partial-XXXXXX", report_target) >=
	    sizeof(report_partial))
		die("the report's name is too long: %s", path);
	free(real);
	fd = mkstemp(report_partial);
	if (fd < 0) {
		fail_errno("mkstemp", report_partial);
		report_partial[0] = '\0';
		exit(EXIT_RUNTIME);
	}
	atexit(remove_unfinished_report);
	if (!(out = fdopen(fd, "w")))
		die("fdopen(%s): %s", report_partial, strerror(errno));
	return out;
}

int report_close(FILE *out, const char *path)
{
	if (out == stdout) { /* a reader that went away is the caller's to report (a stop, not a failure) */
		fflush(out);
		return 0;
	}
	if (fclose(out) != 0 || (!report_in_place && rename(report_partial, report_target) != 0)) {
		fail_errno("write the report", path);
		return EXIT_RUNTIME;
	}
	report_placed = 1;
	return 0;
}
