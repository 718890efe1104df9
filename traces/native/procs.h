/*
 * procs.h - what the kernel knew while the trace ran: each process's fd table, the open
 * file descriptions behind it (shared by dup and fork, so offsets move together) and its
 * working directory.  Threads share tables (CLONE_FILES, CLONE_FS); forks copy them.
 */
#ifndef S2E_PROCS_H
#define S2E_PROCS_H

#include <stddef.h>
#include <stdint.h>

enum ofd_kind { OFD_FILE, OFD_OTHER /* pipe, socket, eventfd, ...: not the filesystem */ };

struct ofd {
	char *path;
	int64_t offset;
	int64_t end;      /* largest offset + size seen through it: where O_APPEND writes land */
	int append;
	enum ofd_kind kind;
	int refs;
	int64_t id;       /* 0 until a fork shares it with another process group (forks.h) */
};

struct fdslot {
	struct ofd *ofd;
	int cloexec;
};

struct fdtable {
	struct fdslot *slot;
	int64_t cap;
	int refs;
};

struct fsinfo {
	char *cwd; /* NULL until a chdir tells us */
	int refs;
};

struct proc {
	long pid;
	int used;
	struct fdtable *fds;
	struct fsinfo *fs;
	/* An <unfinished ...> call waiting for its <... resumed> line. */
	char *pending;
	size_t pending_len, pending_cap;
	int64_t pending_ts;
	long pending_line;
};

struct procs {
	struct proc *table;
	size_t cap, count;
};

void procs_init(struct procs *ps);
void procs_free(struct procs *ps);
/* The process, created (empty fd table, unknown cwd) on first sight. */
struct proc *procs_get(struct procs *ps, long pid);
/* fork/clone: the child copies or shares the parent's fd table and fs info. */
void procs_fork(struct procs *ps, long parent, long child, int share_files, int share_fs);
/* Has this pid been seen (and not only as a fresh name)? */
int procs_known(struct procs *ps, long pid);
/* The process strace printed without a pid turns out to be `to`: give it that pid. */
void procs_rename(struct procs *ps, long from, long to);
/* The process exited: forget its tables (the pid may be reused later). */
void procs_exit(struct procs *ps, long pid);

/* Descriptors at or above this are not kept (Linux's default limit, fs.nr_open, is 2^20):
 * a table grows to the highest descriptor, and every fork copies it. */
enum { FD_LIMIT = 1 << 20 };

struct ofd *ofd_new(const char *path, enum ofd_kind kind, int append);
struct ofd *fd_get(struct proc *p, int64_t fd);
/* Takes a reference on ofd; a fresh ofd (no references) is freed if fd is impossible
 * (negative, or FD_LIMIT or more): then fd_get(p, fd) stays NULL. */
void fd_install(struct proc *p, int64_t fd, struct ofd *ofd, int cloexec);
void fd_close(struct proc *p, int64_t fd);
void fd_set_cloexec(struct proc *p, int64_t fd, int cloexec);
/* execve succeeded: close-on-exec descriptors are gone. */
void fd_exec(struct proc *p);
void proc_set_cwd(struct proc *p, const char *cwd);

#endif
