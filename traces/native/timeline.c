/*
 * timeline.c - per-process lifetimes and call counts of a traced job (timeline.h).  The
 * lifetimes live in an open-addressing table keyed by pid; a reused pid extends the
 * lifetime it had, which a job short enough to trace rarely sees.
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "timeline.h"

/* Calls that block until another process acts: time spent in them is that process's. */
static const char *const WAITING[] = {
	"wait4", "waitid", "waitpid", "select", "pselect6", "poll", "ppoll", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "futex", "pause", "rt_sigsuspend", "rt_sigtimedwait", "sigsuspend", "accept", "accept4",
};

/* Calls that take a microsecond or less untraced, whatever the filesystem: their traced
 * duration is tracing's own.  A duration over GAUGE_CAP_NS was preempted, not traced. */
static const char *const GAUGES[] = {
	"close", "brk", "mprotect", "rt_sigaction", "rt_sigprocmask", "getpid", "getppid", "gettid", "getuid",
	"geteuid", "getgid", "getegid", "lseek", "fcntl", "dup", "dup2", "dup3", "umask", "set_robust_list",
	"set_tid_address", "arch_prctl", "prlimit64", "getcwd", "sigaltstack", "getrandom", "sched_getaffinity",
};
enum { GAUGE_CAP_NS = 1000000 };

static int in(const struct call *c, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (span_eq(c->name, names[i]))
			return 1;
	return 0;
}

void timeline_init(struct timeline *t)
{
	memset(t, 0, sizeof(*t));
	t->first_ns = NO_VALUE;
	t->last_ns = NO_VALUE;
}

void timeline_free(struct timeline *t)
{
	free(t->slot);
	t->slot = NULL;
}

static struct lifetime *find(struct lifetime *slot, size_t cap, long pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (cap - 1);

	while (slot[i].pid && slot[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static void grow(struct timeline *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	struct lifetime *slot = calloc(cap, sizeof(*slot));

	if (!slot) {
		fputs("strace2events: out of memory\n", stderr);
		exit(1);
	}
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].pid)
			*find(slot, cap, t->slot[i].pid) = t->slot[i];
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
}

int timeline_waits(const struct call *c)
{
	return in(c, WAITING, sizeof(WAITING) / sizeof(WAITING[0]));
}

/* Does the call name a descriptor that -y annotated (strace reads its link per call)? */
static int fd_annotated(const struct call *c)
{
	struct span path;
	int64_t fd;

	if (c->ret_path.len)
		return 1;
	return c->nargs > 0 && span_fd(c->arg[0], &fd, &path) == 0 && path.len > 0;
}

void timeline_call(struct timeline *t, long pid, int64_t ts_ns, const struct call *c, int blocking)
{
	struct lifetime *l;
	int64_t end;

	t->calls++;
	t->fd_calls += fd_annotated(c);
	if (span_eq(c->name, "execve") || span_eq(c->name, "execveat"))
		t->execs += c->ret_known && c->ret == 0;
	if (span_eq(c->name, "clone") || span_eq(c->name, "clone3") || span_eq(c->name, "fork") ||
	    span_eq(c->name, "vfork"))
		t->forks += c->ret_known && c->ret > 0;
	if (c->dur_ns >= 0) {
		t->timed_calls++;
		t->calls_ns += c->dur_ns;
		if (blocking) {
			t->blocking_calls++;
			t->blocked_ns += c->dur_ns;
		} else if (c->dur_ns < GAUGE_CAP_NS && in(c, GAUGES, sizeof(GAUGES) / sizeof(GAUGES[0]))) {
			t->gauge_calls++;
			t->gauge_ns += c->dur_ns;
		}
	}
	if (ts_ns == NO_VALUE)
		return;
	end = ts_ns + (c->dur_ns > 0 ? c->dur_ns : 0);
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
		t->count++;
	}
	if (ts_ns < l->first_ns)
		l->first_ns = ts_ns;
	if (end > l->last_ns)
		l->last_ns = end;
}

void timeline_json(const struct timeline *t, FILE *f)
{
	int64_t lifetimes = 0;

	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].pid)
			lifetimes += t->slot[i].last_ns - t->slot[i].first_ns;
	fprintf(f, "{\"processes\":%zu,\"calls\":%ld,\"fd_calls\":%ld,\"timed_calls\":%ld,\"blocking_calls\":%ld,"
		"\"execs\":%ld,\"forks\":%ld,\"gauge_calls\":%ld,\"calls_ns\":%lld,\"blocked_ns\":%lld,"
		"\"gauge_ns\":%lld,\"lifetimes_ns\":%lld,\"span_ns\":%lld}",
		t->count, t->calls, t->fd_calls, t->timed_calls, t->blocking_calls, t->execs, t->forks, t->gauge_calls,
		(long long)t->calls_ns, (long long)t->blocked_ns, (long long)t->gauge_ns, (long long)lifetimes,
		(long long)(t->first_ns == NO_VALUE ? 0 : t->last_ns - t->first_ns));
}
