/*
 * forks.c - the state a fork carries from one process group's parse to another's, and the
 * changes of shared offsets (forks.h).
 */
#include "forks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

enum { EXIT_BAD_INPUT = 2, CALL_ROWS = 8 };

struct row {
	int64_t id;
	enum shared_kind kind;
	int64_t a, b, c;
};

static struct {
	long group;
	const char *dir;
	FILE *ops;
	int64_t *day_offset, *last_tod;
	struct line_key key;
	int64_t shared; /* descriptions this group has shared so far */
	struct row call[CALL_ROWS];
	int ncall;
} g;

static void fail(const char *path, const char *why)
{
	fprintf(stderr, "%s: %s\n", path, why);
	exit(EXIT_BAD_INPUT);
}

void forks_start(long group, const char *forks_dir, const char *ops_path, int64_t *day_offset, int64_t *last_tod)
{
	g.group = group;
	g.dir = forks_dir;
	g.day_offset = day_offset;
	g.last_tod = last_tod;
	g.ops = fopen(ops_path, "w");
	if (!g.ops)
		fail(ops_path, strerror(errno));
}

int forks_on(void)
{
	return g.ops != NULL;
}

void forks_line(const struct line_key *key)
{
	g.key = *key;
}

static void write_row(const struct row *r, long seq)
{
	fprintf(g.ops, "%" PRId64 "\t%" PRId64 "\t%ld\t%ld\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%ld\n", r->id,
		g.key.ns, g.key.line, g.key.pid, (int)r->kind, r->a, r->b, r->c, seq);
}

void forks_op(const struct ofd *o, enum shared_kind kind, int64_t a, int64_t b, int64_t c)
{
	struct row r = { o ? o->id : 0, kind, a, b, c };

	if (!g.ops || !r.id)
		return;
	if (g.ncall == CALL_ROWS) { /* no call changes this many offsets; keep order regardless */
		for (int i = 0; i < g.ncall; i++)
			write_row(&g.call[i], -1);
		g.ncall = 0;
	}
	g.call[g.ncall++] = r;
}

void forks_call_done(long seq)
{
	for (int i = 0; i < g.ncall; i++)
		write_row(&g.call[i], g.call[i].kind == SHARED_RW ? seq : -1);
	g.ncall = 0;
}

static void write_bytes(FILE *f, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	fprintf(f, "%lld\n", s ? (long long)n : -1LL);
	fwrite(s ? s : "", 1, n, f);
	fputc('\n', f);
}

void forks_fork(const struct proc *child)
{
	char path[4096], tmp[4200];
	FILE *f;

	if (!g.ops)
		return;
	snprintf(path, sizeof(path), "%s/%ld.state", g.dir, child->pid);
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	f = fopen(tmp, "w");
	if (!f)
		fail(tmp, strerror(errno));
	fprintf(f, "fsbm-fork-state 1 %" PRId64 " %" PRId64 "\ncwd ", *g.day_offset, *g.last_tod);
	write_bytes(f, child->fs->cwd);
	for (int64_t fd = 0; fd < child->fds->cap; fd++) {
		struct ofd *o = child->fds->slot[fd].ofd;

		if (!o)
			continue;
		if (!o->id) { /* shared from now on: its offset's changes go to the ops file */
			o->id = ((int64_t)g.group << 32) | ++g.shared;
			write_row(&(struct row){ o->id, SHARED_FROM, o->offset, o->end, o->append }, -1);
		}
		fprintf(f, "fd %" PRId64 " %d %" PRId64 " %" PRId64 " %" PRId64 " %d %d ", fd, child->fds->slot[fd].cloexec,
			o->id, o->offset, o->end, o->append, (int)o->kind);
		write_bytes(f, o->path);
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		fail(path, strerror(errno));
}

/* A length-prefixed string as write_bytes wrote it; NULL for -1. */
static char *read_bytes(FILE *f, const char *path)
{
	long long n;
	char *s;

	if (fscanf(f, "%lld", &n) != 1 || fgetc(f) != '\n' || n < -1 || n > (1 << 20))
		fail(path, "not a fork state written by strace2events");
	if (n < 0) {
		fgetc(f);
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n || fgetc(f) != '\n')
		fail(path, "not a fork state written by strace2events (cut short?)");
	s[n] = '\0';
	return s;
}

static void load(const char *path, struct proc *root, int64_t *day_offset, int64_t *last_tod)
{
	FILE *f = fopen(path, "r");
	struct ofd **seen = NULL;
	size_t nseen = 0;
	char *cwd;
	int64_t fd, id, offset, end;
	int cloexec, append, kind;

	if (!f)
		fail(path, strerror(errno));
	if (fscanf(f, "fsbm-fork-state 1 %" SCNd64 " %" SCNd64 " cwd ", day_offset, last_tod) != 2)
		fail(path, "not a fork state written by strace2events");
	cwd = read_bytes(f, path);
	if (cwd)
		proc_set_cwd(root, cwd);
	free(cwd);
	while (fscanf(f, "fd %" SCNd64 " %d %" SCNd64 " %" SCNd64 " %" SCNd64 " %d %d ", &fd, &cloexec, &id, &offset,
		      &end, &append, &kind) == 7) {
		char *file = read_bytes(f, path);
		struct ofd *o = NULL;

		for (size_t i = 0; i < nseen && !o; i++) /* dup'ed descriptors share one description */
			if (seen[i]->id == id)
				o = seen[i];
		if (!o) {
			o = ofd_new(file ? file : "", kind == OFD_FILE ? OFD_FILE : OFD_OTHER, append);
			o->id = id;
			o->offset = offset;
			o->end = end;
			seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
			seen[nseen++] = o;
		}
		fd_install(root, fd, o, cloexec);
		free(file);
	}
	if (!feof(f))
		fail(path, "not a fork state written by strace2events");
	free(seen);
	fclose(f);
}

void forks_load_all(const char *list, struct procs *ps, int64_t *day_offset, int64_t *last_tod)
{
	FILE *f = fopen(list, "r");
	char *entry = NULL;
	size_t cap = 0;
	ssize_t n;
	int first = 1;

	if (!f)
		fail(list, strerror(errno));
	while ((n = getline(&entry, &cap, f)) > 0) {
		char *tab = strchr(entry, '\t');
		int64_t day, tod;

		if (entry[n - 1] == '\n')
			entry[n - 1] = '\0';
		if (!tab)
			fail(list, "expected ROOT<TAB>PATH");
		load(tab + 1, procs_get(ps, strtol(entry, NULL, 10)), &day, &tod);
		if (first || day < *day_offset || (day == *day_offset && tod < *last_tod)) {
			*day_offset = day;
			*last_tod = tod;
		}
		first = 0;
	}
	free(entry);
	fclose(f);
}

void forks_end(void)
{
	if (g.ops && fclose(g.ops) != 0)
		fail("the shared-ops file", strerror(errno));
	g.ops = NULL;
}
