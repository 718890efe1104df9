/*
 * procs.c - processes, fd tables and open file descriptions, reference counted.
 */
#include "procs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xrealloc(NULL, n), s, n);
}

struct ofd *ofd_new(const char *path, enum ofd_kind kind, int append)
{
	struct ofd *o = xrealloc(NULL, sizeof(*o));

	o->path = xstrdup(path);
	o->offset = 0;
	o->end = 0;
	o->append = append;
	o->kind = kind;
	o->refs = 0;
	o->id = 0;
	return o;
}

static void ofd_put(struct ofd *o)
{
	if (o && --o->refs == 0) {
		free(o->path);
		free(o);
	}
}

static struct fdtable *fdtable_new(void)
{
	struct fdtable *t = xrealloc(NULL, sizeof(*t));

	t->slot = NULL;
	t->cap = 0;
	t->refs = 1;
	return t;
}

static struct fdtable *fdtable_copy(const struct fdtable *src)
{
	struct fdtable *t = fdtable_new();

	t->cap = src->cap;
	t->slot = xrealloc(NULL, sizeof(*t->slot) * (size_t)(t->cap ? t->cap : 1));
	for (int64_t i = 0; i < t->cap; i++) {
		t->slot[i] = src->slot[i];
		if (t->slot[i].ofd)
			t->slot[i].ofd->refs++;
	}
	return t;
}

static void fdtable_put(struct fdtable *t)
{
	if (!t || --t->refs > 0)
		return;
	for (int64_t i = 0; i < t->cap; i++)
		ofd_put(t->slot[i].ofd);
	free(t->slot);
	free(t);
}

static struct fsinfo *fsinfo_new(const char *cwd)
{
	struct fsinfo *f = xrealloc(NULL, sizeof(*f));

	f->cwd = cwd ? xstrdup(cwd) : NULL;
	f->refs = 1;
	return f;
}

static void fsinfo_put(struct fsinfo *f)
{
	if (f && --f->refs == 0) {
		free(f->cwd);
		free(f);
	}
}

void procs_init(struct procs *ps)
{
	ps->cap = 1024;
	ps->count = 0;
	ps->table = xrealloc(NULL, sizeof(*ps->table) * ps->cap);
	memset(ps->table, 0, sizeof(*ps->table) * ps->cap);
}

static void proc_release(struct proc *p)
{
	fdtable_put(p->fds);
	fsinfo_put(p->fs);
	p->fds = NULL;
	p->fs = NULL;
	p->pending_len = 0;
}

void procs_free(struct procs *ps)
{
	for (size_t i = 0; i < ps->cap; i++) {
		if (ps->table[i].used) {
			proc_release(&ps->table[i]);
			free(ps->table[i].pending);
		}
	}
	free(ps->table);
}

/* Open addressing on the pid; the table doubles at half full. */
static struct proc *slot_for(struct procs *ps, long pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (ps->cap - 1);

	while (ps->table[i].used && ps->table[i].pid != pid)
		i = (i + 1) & (ps->cap - 1);
	return &ps->table[i];
}

static void grow(struct procs *ps)
{
	struct proc *old = ps->table;
	size_t old_cap = ps->cap;

	ps->cap *= 2;
	ps->table = xrealloc(NULL, sizeof(*ps->table) * ps->cap);
	memset(ps->table, 0, sizeof(*ps->table) * ps->cap);
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			*slot_for(ps, old[i].pid) = old[i];
	free(old);
}

struct proc *procs_get(struct procs *ps, long pid)
{
	struct proc *p;

	if (ps->count * 2 >= ps->cap)
		grow(ps);
	p = slot_for(ps, pid);
	if (!p->used) {
		memset(p, 0, sizeof(*p));
		p->used = 1;
		p->pid = pid;
		ps->count++;
	}
	if (!p->fds)
		p->fds = fdtable_new();
	if (!p->fs)
		p->fs = fsinfo_new(NULL);
	return p;
}

void procs_fork(struct procs *ps, long parent, long child, int share_files, int share_fs)
{
	struct proc *pp = procs_get(ps, parent);
	size_t pending;
	struct fdtable *fds;
	struct fsinfo *fs;
	struct proc *cp;

	if (share_files) {
		fds = pp->fds;
		fds->refs++;
	} else {
		fds = fdtable_copy(pp->fds);
	}
	if (share_fs) {
		fs = pp->fs;
		fs->refs++;
	} else {
		fs = fsinfo_new(pp->fs->cwd);
	}
	cp = procs_get(ps, child); /* may move pp: the table can grow */
	pending = cp->pending_len; /* the child's lines can come first: a call it left unfinished stays */
	proc_release(cp);
	cp->pending_len = pending;
	cp->fds = fds;
	cp->fs = fs;
}

int procs_known(struct procs *ps, long pid)
{
	return slot_for(ps, pid)->used;
}

void procs_rename(struct procs *ps, long from, long to)
{
	struct proc *src = slot_for(ps, from), moved;

	if (!src->used)
		return;
	moved = *src;
	/* Take it out, then re-insert every entry after it so probing chains stay whole. */
	src->used = 0;
	ps->count--;
	for (size_t i = ((size_t)(src - ps->table) + 1) & (ps->cap - 1); ps->table[i].used;
	     i = (i + 1) & (ps->cap - 1)) {
		struct proc again = ps->table[i];

		ps->table[i].used = 0;
		*slot_for(ps, again.pid) = again;
	}
	moved.pid = to;
	*slot_for(ps, to) = moved;
	ps->count++;
}

void procs_exit(struct procs *ps, long pid)
{
	struct proc *p = slot_for(ps, pid);

	if (p->used)
		proc_release(p);
}

struct ofd *fd_get(struct proc *p, int64_t fd)
{
	if (fd < 0 || fd >= p->fds->cap)
		return NULL;
	return p->fds->slot[fd].ofd;
}

void fd_install(struct proc *p, int64_t fd, struct ofd *ofd, int cloexec)
{
	struct fdtable *t = p->fds;

	if (fd < 0 || fd >= FD_LIMIT) { /* not a descriptor a kernel hands out: drop it */
		ofd->refs++;
		ofd_put(ofd);
		return;
	}
	if (fd >= t->cap) {
		int64_t cap = t->cap ? t->cap : 64;

		while (cap <= fd)
			cap *= 2;
		t->slot = xrealloc(t->slot, sizeof(*t->slot) * (size_t)cap);
		memset(t->slot + t->cap, 0, sizeof(*t->slot) * (size_t)(cap - t->cap));
		t->cap = cap;
	}
	ofd->refs++;
	ofd_put(t->slot[fd].ofd);
	t->slot[fd].ofd = ofd;
	t->slot[fd].cloexec = cloexec;
}

void fd_close(struct proc *p, int64_t fd)
{
	if (fd < 0 || fd >= p->fds->cap)
		return;
	ofd_put(p->fds->slot[fd].ofd);
	p->fds->slot[fd].ofd = NULL;
}

void fd_set_cloexec(struct proc *p, int64_t fd, int cloexec)
{
	if (fd >= 0 && fd < p->fds->cap)
		p->fds->slot[fd].cloexec = cloexec;
}

void fd_exec(struct proc *p)
{
	/* exec unshares the table first, then closes the close-on-exec descriptors. */
	if (p->fds->refs > 1) {
		struct fdtable *own = fdtable_copy(p->fds);

		fdtable_put(p->fds);
		p->fds = own;
	}
	for (int64_t i = 0; i < p->fds->cap; i++)
		if (p->fds->slot[i].ofd && p->fds->slot[i].cloexec)
			fd_close(p, i);
}

void proc_set_cwd(struct proc *p, const char *cwd)
{
	free(p->fs->cwd);
	p->fs->cwd = xstrdup(cwd);
}
