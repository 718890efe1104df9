/*
 * events.h - one completed operation as strace2events writes it (DESIGN.md: Event), and
 * the state a handler needs to produce it.
 */
#ifndef S2E_EVENTS_H
#define S2E_EVENTS_H

#include <stdint.h>

#include "args.h"
#include "procs.h"

#define NO_VALUE INT64_MIN

enum { PATH_CAP = 8192 };

struct event {
	int64_t ts, dur;
	long pid;
	const char *op;
	struct span orig;
	const char *file;      /* stable id: the resolved path, or "?fd=N/pid=P" */
	const char *path;      /* NULL when unknown */
	const char *path2;     /* rename/link target, symlink contents */
	int64_t offset, size, ret;
	const char *err;
	long line;
	/* Buffers the strings above point into. */
	char file_buf[PATH_CAP], path_buf[PATH_CAP], path2_buf[PATH_CAP];
};

struct sysdesc;
typedef int (*handler_fn)(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e);

struct sysdesc {
	const char *name;
	const char *op;   /* DESIGN's vocabulary; NULL when the call only changes state (dup, clone) */
	handler_fn handle;
	int a, b, c;      /* argument positions, meaning set by the handler */
};

/* The descriptor for a syscall name, or NULL if it does not touch files. */
const struct sysdesc *syscall_lookup(struct span name);
/* The procs table handlers use for fork/clone. */
void syscalls_bind(struct procs *ps);

#endif
