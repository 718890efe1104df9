/*
 * syscalls.c - the syscalls that touch files, each a descriptor {name, operation,
 * handler, argument positions} in one table.  A handler updates the process model (fd
 * tables, offsets, cwd) and fills the event; it returns 1 when the call is an event.
 * The operation names are DESIGN.md's vocabulary and live here and nowhere else in C.
 */
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "forks.h"

static struct procs *procs;

void syscalls_bind(struct procs *ps)
{
	procs = ps;
}

static int failed(const struct call *c)
{
	return c->ret_known && c->ret < 0;
}

/* Append text to out[*used..cap), keeping the terminating NUL; longer paths are cut. */
static void append(char *out, size_t *used, size_t cap, const char *text)
{
	size_t n = strlen(text);

	if (*used + n >= cap)
		n = cap - 1 - *used;
	memcpy(out + *used, text, n);
	*used += n;
	out[*used] = '\0';
}

/* Join dir and rel into out, dropping "./" components. */
static void join_path(const char *dir, const char *rel, char *out, size_t cap)
{
	size_t used = 0;

	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	out[0] = '\0';
	append(out, &used, cap, dir);
	if (strcmp(rel, ".") == 0 || rel[0] == '\0')
		return;
	if (used == 0 || out[used - 1] != '/')
		append(out, &used, cap, "/");
	append(out, &used, cap, rel);
}

static void copy_span(struct span s, char *out, size_t cap)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;

	memcpy(out, s.p, n);
	out[n] = '\0';
}

/* The path a directory fd argument names: -y annotation, our table, or a placeholder. */
static void dirfd_path(struct proc *p, struct span arg, char *out, size_t cap, int64_t *fd_out)
{
	struct span annotated;
	struct ofd *o;
	int64_t fd = -100;

	span_fd(arg, &fd, &annotated);
	*fd_out = fd;
	if (fd == -100 && annotated.len) {
		copy_span(annotated, out, cap); /* -y told us the cwd: remember it */
		if (!p->fs->cwd || strcmp(p->fs->cwd, out) != 0)
			proc_set_cwd(p, out);
	} else if (fd == -100) {
		snprintf(out, cap, "%s", p->fs->cwd ? p->fs->cwd : "");
	} else if (annotated.len) {
		copy_span(annotated, out, cap);
	} else if ((o = fd_get(p, fd)) != NULL) {
		snprintf(out, cap, "%s", o->path);
	} else {
		snprintf(out, cap, "?fd=%lld/pid=%ld", (long long)fd, p->pid);
	}
}

/* Resolve a path argument (relative to dirfd_arg, or the cwd when dirfd_arg < 0). */
static int resolve(struct proc *p, const struct call *c, int dirfd_arg, int path_arg, char *out, size_t cap)
{
	char rel[PATH_CAP], dir[PATH_CAP];
	int64_t fd;

	if (path_arg >= c->nargs || span_string(c->arg[path_arg], rel, sizeof(rel)) != 0)
		return -1;
	if (rel[0] == '/') {
		snprintf(out, cap, "%s", rel);
		return 0;
	}
	if (dirfd_arg >= 0 && dirfd_arg < c->nargs)
		dirfd_path(p, c->arg[dirfd_arg], dir, sizeof(dir), &fd);
	else
		snprintf(dir, sizeof(dir), "%s", p->fs->cwd ? p->fs->cwd : "");
	if (dir[0] == '\0')
		snprintf(out, cap, "%s", rel); /* cwd unknown: the path as the program gave it */
	else
		join_path(dir, rel, out, cap);
	return 0;
}

static void set_path(struct event *e, const char *path)
{
	snprintf(e->path_buf, sizeof(e->path_buf), "%s", path);
	e->path = e->path_buf;
	e->file = e->path_buf;
}

/* Where a transfer of n bytes from offset ends; no file reaches past INT64_MAX, so neither
 * does this (a log can claim any offset). */
static int64_t past(int64_t offset, int64_t n)
{
	int64_t end;

	return __builtin_add_overflow(offset, n, &end) ? INT64_MAX : end;
}

/* The event's file from an fd argument; 0 when that fd is a pipe or socket (not an event). */
static int from_fd(struct proc *p, const struct call *c, int fd_arg, struct event *e, struct ofd **ofd_out)
{
	struct span annotated;
	struct ofd *o;
	int64_t fd;

	*ofd_out = NULL;
	if (fd_arg >= c->nargs || span_fd(c->arg[fd_arg], &fd, &annotated) != 0)
		return 0;
	o = fd_get(p, fd);
	if (!o && annotated.len) {
		char path[PATH_CAP];

		copy_span(annotated, path, sizeof(path));
		fd_install(p, fd, ofd_new(path, path[0] == '/' ? OFD_FILE : OFD_OTHER, 0), 0);
		o = fd_get(p, fd);
		if (!o) { /* a number no kernel hands out: the table keeps nothing, -y still names it */
			if (path[0] != '/')
				return 0;
			set_path(e, path);
			return 1;
		}
	}
	if (o && o->kind == OFD_OTHER)
		return 0;
	*ofd_out = o;
	if (o) {
		set_path(e, o->path);
	} else {
		snprintf(e->file_buf, sizeof(e->file_buf), "?fd=%lld/pid=%ld", (long long)fd, p->pid);
		e->file = e->file_buf;
	}
	return 1;
}

/* open(path, flags), openat(dirfd, path, flags), creat(path), openat2(dirfd, path, how). */
static int h_open(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	char path[PATH_CAP];
	struct span flags = d->c >= 0 && d->c < c->nargs ? c->arg[d->c] : (struct span){ "O_CREAT", 7 };
	int creating = span_has(flags, "O_CREAT") || span_has(flags, "O_TMPFILE");

	if (resolve(p, c, d->a, d->b, path, sizeof(path)) != 0)
		return 0;
	set_path(e, path);
	e->op = creating ? "create" : d->op;
	if (!failed(c) && c->ret_known && c->ret >= 0) {
		char annotated[PATH_CAP];

		if (c->ret_path.len) {
			copy_span(c->ret_path, annotated, sizeof(annotated));
			set_path(e, annotated);
		}
		fd_install(p, c->ret, ofd_new(e->path, OFD_FILE, span_has(flags, "O_APPEND")),
			   span_has(flags, "O_CLOEXEC"));
	}
	return 1;
}

static int h_close(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct ofd *o;
	int64_t fd;
	struct span ann;
	int emit = from_fd(p, c, d->a, e, &o);

	if (c->nargs > 0 && span_fd(c->arg[0], &fd, &ann) == 0)
		fd_close(p, fd);
	return emit;
}

/*
 * read/write (offset from the file description, which they advance), pread/pwrite (the
 * offset argument d->c), readv/writev (size from the iovecs, d->b < 0).
 */
static int h_rw(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct ofd *o;
	int is_write = d->op[0] == 'w';
	int64_t off = NO_VALUE, size = NO_VALUE;

	if (!from_fd(p, c, d->a, e, &o))
		return 0;
	if (d->b >= 0 && d->b < c->nargs)
		span_int(c->arg[d->b], &size);
	else if (d->b < 0 && c->nargs > 1)
		size = span_iov_total(c->arg[1]);
	if (d->c >= 0 && d->c < c->nargs && span_int(c->arg[d->c], &off) == 0 && off >= 0) {
		/* positional: the description's offset does not move */
		forks_op(o, SHARED_POSITIONAL, off, c->ret_known && c->ret > 0 ? c->ret : 0, 0);
	} else if (o) {
		off = is_write && o->append ? o->end : o->offset;
		if (c->ret_known && c->ret > 0)
			o->offset = past(off, c->ret);
		forks_op(o, SHARED_RW, is_write, c->ret_known && c->ret > 0 ? c->ret : 0, 0);
	}
	if (o && off != NO_VALUE && c->ret_known && c->ret > 0 && past(off, c->ret) > o->end)
		o->end = past(off, c->ret);
	e->offset = off;
	e->size = size;
	return 1;
}

/*
 * copy_file_range(fd_in, off_in, fd_out, off_out, len, flags): the write to fd_out (h_rw,
 * with a, b, c), and the source's path in path2, so a replay can copy from it as the
 * kernel did (a clone where extents are shared) rather than write bytes.  Without off_in
 * the copy moves the source's offset as a read would.
 */
static int h_copy(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct span annotated;
	struct ofd *source;
	int64_t fd;

	if (!h_rw(p, c, d, e))
		return 0;
	if (c->nargs < 2 || span_fd(c->arg[0], &fd, &annotated) != 0)
		return 1;
	source = fd_get(p, fd);
	if (source && source->kind == OFD_FILE)
		snprintf(e->path2_buf, sizeof(e->path2_buf), "%s", source->path);
	else if (!source && annotated.len && annotated.p[0] == '/')
		copy_span(annotated, e->path2_buf, sizeof(e->path2_buf));
	else
		return 1;
	e->path2 = e->path2_buf;
	if (source && span_eq(c->arg[1], "NULL") && c->ret_known && c->ret > 0) {
		source->offset = past(source->offset, c->ret);
		forks_op(source, SHARED_ADVANCE, c->ret, 0, 0);
	}
	return 1;
}

static int h_lseek(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct ofd *o;
	int64_t pos = NO_VALUE;

	if (!from_fd(p, c, d->a, e, &o))
		return 0;
	if (d->b > 0 && d->b < c->nargs) { /* _llseek: the result is "[pos]" */
		struct span r = c->arg[d->b];

		if (r.len > 2 && r.p[0] == '[')
			span_int((struct span){ r.p + 1, r.len - 2 }, &pos);
	} else if (c->ret_known && c->ret >= 0) {
		pos = c->ret;
	}
	if (o && pos != NO_VALUE && !failed(c)) {
		o->offset = pos;
		forks_op(o, SHARED_SEEK, pos, 0, 0);
	}
	e->offset = pos;
	return 1;
}

/* dup(old), dup2(old, new), dup3(old, new, flags): the new fd shares the description. */
static int h_dup(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct span ann;
	int64_t old;
	struct ofd *o;

	(void)d;
	(void)e;
	if (failed(c) || !c->ret_known || c->nargs < 1 || span_fd(c->arg[0], &old, &ann) != 0)
		return 0;
	o = fd_get(p, old);
	if (o && old != c->ret)
		fd_install(p, c->ret, o, c->nargs > 2 && span_has(c->arg[2], "O_CLOEXEC"));
	else if (!o)
		fd_close(p, c->ret);
	return 0;
}

static int h_fcntl(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct span ann;
	int64_t fd;
	struct ofd *o;

	(void)d;
	(void)e;
	if (failed(c) || c->nargs < 2 || span_fd(c->arg[0], &fd, &ann) != 0)
		return 0;
	o = fd_get(p, fd);
	if (span_eq(c->arg[1], "F_DUPFD") || span_eq(c->arg[1], "F_DUPFD_CLOEXEC")) {
		if (o && c->ret_known)
			fd_install(p, c->ret, o, span_eq(c->arg[1], "F_DUPFD_CLOEXEC"));
	} else if (span_eq(c->arg[1], "F_SETFD") && c->nargs > 2) {
		fd_set_cloexec(p, fd, span_has(c->arg[2], "FD_CLOEXEC"));
	} else if (span_eq(c->arg[1], "F_SETFL") && c->nargs > 2 && o) {
		o->append = span_has(c->arg[2], "O_APPEND");
		forks_op(o, SHARED_APPEND, o->append, 0, 0);
	}
	return 0;
}

/* An operation on an fd: fsync, fstat, fchmod, ftruncate, getdents (size at d->b: the length
 * ftruncate leaves, the buffer getdents fills). */
static int h_fd_op(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct ofd *o;

	if (!from_fd(p, c, d->a, e, &o))
		return 0;
	if (d->b >= 0 && d->b < c->nargs)
		span_int(c->arg[d->b], &e->size);
	return 1;
}

/* A path operation: path at d->b, relative to dirfd d->a (or the cwd when d->a < 0). */
static int h_path(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	char path[PATH_CAP];

	/* AT_EMPTY_PATH ("" with a descriptor), and utimensat(fd, NULL, ...), which is futimens
	 * (cp -a and tar set times so): the call acts on the descriptor's file. */
	if (d->b < c->nargs && d->a >= 0 && (span_eq(c->arg[d->b], "\"\"") || span_eq(c->arg[d->b], "NULL")))
		return h_fd_op(p, c, &(struct sysdesc){ d->name, d->op, NULL, d->a, -1, -1 }, e);
	if (resolve(p, c, d->a, d->b, path, sizeof(path)) != 0)
		return 0;
	set_path(e, path);
	/* unlinkat(dirfd, path, AT_REMOVEDIR) removes a directory. */
	if (d->c >= 0 && d->c < c->nargs && span_has(c->arg[d->c], "AT_REMOVEDIR"))
		e->op = "rmdir";
	return 1;
}

/* truncate(path, length): the path, and the length it leaves the file at as the size, so a
 * replay cuts the file to what the program did, not to nothing. */
static int h_truncate(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	if (!h_path(p, c, d, e))
		return 0;
	if (d->c >= 0 && d->c < c->nargs)
		span_int(c->arg[d->c], &e->size);
	return 1;
}

/* readlink(path, buf, size), readlinkat(dirfd, path, buf, size): the link, and in path2 the
 * text it held, as strace showed the buffer (cut at -s's length): a replay makes the link
 * where the trace found one (traces/replay_plan.py). */
static int h_readlink(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	if (!h_path(p, c, d, e))
		return 0;
	if (!failed(c) && d->b + 1 < c->nargs && span_string(c->arg[d->b + 1], e->path2_buf, sizeof(e->path2_buf)) == 0 &&
	    e->path2_buf[0])
		e->path2 = e->path2_buf;
	return 1;
}

/*
 * rename/link: the old path at d->b (dirfd d->a), the new one after its dirfd d->c, or
 * right after the old path when there are no dirfds.  symlink: the contents (argument 0),
 * then the new entry at d->b (dirfd d->a).
 */
static int h_two_paths(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	char first[PATH_CAP], second[PATH_CAP];
	int symlink = strcmp(d->op, "symlink") == 0;

	if (symlink) {
		if (c->nargs < 2 || span_string(c->arg[0], first, sizeof(first)) != 0 ||
		    resolve(p, c, d->a, d->b, second, sizeof(second)) != 0)
			return 0;
		set_path(e, second);            /* the link created */
		snprintf(e->path2_buf, sizeof(e->path2_buf), "%s", first);
	} else {
		int new_path = d->c >= 0 ? d->c + 1 : d->b + 1;

		if (resolve(p, c, d->a, d->b, first, sizeof(first)) != 0 ||
		    resolve(p, c, d->c, new_path, second, sizeof(second)) != 0)
			return 0;
		if (strcmp(d->op, "link") == 0) {
			set_path(e, second);    /* the new name; path2 is what it links to */
			snprintf(e->path2_buf, sizeof(e->path2_buf), "%s", first);
		} else {
			set_path(e, first);     /* rename: the file that moves; path2 where to */
			snprintf(e->path2_buf, sizeof(e->path2_buf), "%s", second);
		}
	}
	e->path2 = e->path2_buf;
	return 1;
}

/* mmap(addr, length, prot, flags, fd, offset); mmap2's offset is in 4096-byte pages. */
static int h_mmap(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	struct ofd *o;
	int64_t fd, off;
	struct span ann;

	if (c->nargs < 6 || span_has(c->arg[3], "MAP_ANONYMOUS") || span_fd(c->arg[4], &fd, &ann) != 0 || fd < 0)
		return 0;
	if (!from_fd(p, c, 4, e, &o))
		return 0;
	span_int(c->arg[1], &e->size);
	if (span_int(c->arg[5], &off) == 0)
		e->offset = off * d->a;
	return 1;
}

static int h_clone(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	long parent = p->pid;

	(void)e;
	if (c->ret_known && c->ret > 0) {
		int threads = d->a && span_has(c->args, "CLONE_FILES");
		int share_fs = d->a && span_has(c->args, "CLONE_FS");

		procs_fork(procs, parent, (long)c->ret, threads, share_fs);
		if (!threads && !share_fs) /* a process group of its own (forks.h) */
			forks_fork(procs_get(procs, (long)c->ret));
	}
	return 0;
}

static int h_exec(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	(void)d;
	(void)e;
	if (c->ret_known && c->ret == 0)
		fd_exec(p);
	return 0;
}

static int h_chdir(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	char path[PATH_CAP];
	struct ofd *o;

	(void)e;
	if (failed(c))
		return 0;
	if (d->a == 0) { /* fchdir(fd) */
		struct event scratch;

		if (from_fd(p, c, 0, &scratch, &o) && o)
			proc_set_cwd(p, o->path);
	} else if (resolve(p, c, -1, 0, path, sizeof(path)) == 0 && path[0] == '/') {
		proc_set_cwd(p, path);
	}
	return 0;
}

/* Calls returning descriptors that are not files: pipes, sockets, eventfds, ... */
static int h_other_fds(struct proc *p, const struct call *c, const struct sysdesc *d, struct event *e)
{
	(void)e;
	if (failed(c) || !c->ret_known)
		return 0;
	if (d->a >= 0 && d->a < c->nargs) { /* pipe([r, w]), socketpair(..., [a, b]) */
		struct span s = c->arg[d->a];
		int64_t fd;

		for (size_t i = 0; i < s.len; i++) {
			if (s.p[i] >= '0' && s.p[i] <= '9') {
				size_t j = i;

				while (j < s.len && s.p[j] >= '0' && s.p[j] <= '9')
					j++;
				if (span_int((struct span){ s.p + i, j - i }, &fd) == 0)
					fd_install(p, fd, ofd_new("", OFD_OTHER, 0), 0);
				while (j < s.len && s.p[j] != ',' && s.p[j] != ']')
					j++; /* skip a -y annotation */
				i = j;
			}
		}
	} else if (c->ret >= 0) {
		fd_install(p, c->ret, ofd_new("", OFD_OTHER, 0), 0);
	}
	return 0;
}

static const struct sysdesc table[] = {
	/* name, op, handler, a, b, c: see each handler for what a, b, c mean */
	{ "open", "open", h_open, -1, 0, 1 },
	{ "openat", "open", h_open, 0, 1, 2 },
	{ "openat2", "open", h_open, 0, 1, 2 },
	{ "creat", "open", h_open, -1, 0, -1 },
	{ "close", "close", h_close, 0, -1, -1 },
	{ "read", "read", h_rw, 0, 2, -1 },
	{ "write", "write", h_rw, 0, 2, -1 },
	{ "pread64", "read", h_rw, 0, 2, 3 },
	{ "pwrite64", "write", h_rw, 0, 2, 3 },
	{ "pread", "read", h_rw, 0, 2, 3 },
	{ "pwrite", "write", h_rw, 0, 2, 3 },
	{ "readv", "read", h_rw, 0, -1, -1 },
	{ "writev", "write", h_rw, 0, -1, -1 },
	{ "preadv", "read", h_rw, 0, -1, 3 },
	{ "pwritev", "write", h_rw, 0, -1, 3 },
	{ "preadv2", "read", h_rw, 0, -1, 3 },
	{ "pwritev2", "write", h_rw, 0, -1, 3 },
	/* In-kernel copies (cp uses copy_file_range): one event, the write to the destination,
	 * naming its source in path2; the read of the source has no event of its own. */
	{ "copy_file_range", "write", h_copy, 2, 4, 3 },
	{ "sendfile", "write", h_rw, 0, 3, -1 },
	{ "sendfile64", "write", h_rw, 0, 3, -1 },
	{ "lseek", "seek", h_lseek, 0, -1, -1 },
	{ "_llseek", "seek", h_lseek, 0, 3, -1 },
	{ "dup", NULL, h_dup, 0, -1, -1 },
	{ "dup2", NULL, h_dup, 0, -1, -1 },
	{ "dup3", NULL, h_dup, 0, -1, -1 },
	{ "fcntl", NULL, h_fcntl, 0, -1, -1 },
	{ "fcntl64", NULL, h_fcntl, 0, -1, -1 },
	{ "fsync", "fsync", h_fd_op, 0, -1, -1 },
	{ "fdatasync", "fsync", h_fd_op, 0, -1, -1 },
	{ "sync_file_range", "fsync", h_fd_op, 0, -1, -1 },
	{ "fstat", "stat", h_fd_op, 0, -1, -1 },
	{ "fstat64", "stat", h_fd_op, 0, -1, -1 },
	{ "stat", "stat", h_path, -1, 0, -1 },
	{ "lstat", "stat", h_path, -1, 0, -1 },
	{ "stat64", "stat", h_path, -1, 0, -1 },
	{ "lstat64", "stat", h_path, -1, 0, -1 },
	{ "access", "stat", h_path, -1, 0, -1 },
	{ "newfstatat", "stat", h_path, 0, 1, -1 },
	{ "fstatat64", "stat", h_path, 0, 1, -1 },
	{ "statx", "stat", h_path, 0, 1, -1 },
	{ "faccessat", "stat", h_path, 0, 1, -1 },
	{ "faccessat2", "stat", h_path, 0, 1, -1 },
	{ "chmod", "setattr", h_path, -1, 0, -1 },
	{ "chown", "setattr", h_path, -1, 0, -1 },
	{ "lchown", "setattr", h_path, -1, 0, -1 },
	{ "chown32", "setattr", h_path, -1, 0, -1 },
	{ "lchown32", "setattr", h_path, -1, 0, -1 },
	{ "truncate", "setattr", h_truncate, -1, 0, 1 },
	{ "truncate64", "setattr", h_truncate, -1, 0, 1 },
	{ "utime", "setattr", h_path, -1, 0, -1 },
	{ "utimes", "setattr", h_path, -1, 0, -1 },
	{ "fchmodat", "setattr", h_path, 0, 1, -1 },
	{ "fchmodat2", "setattr", h_path, 0, 1, -1 },
	{ "fchownat", "setattr", h_path, 0, 1, -1 },
	{ "utimensat", "setattr", h_path, 0, 1, -1 },
	{ "futimesat", "setattr", h_path, 0, 1, -1 },
	{ "fchmod", "setattr", h_fd_op, 0, -1, -1 },
	{ "fchown", "setattr", h_fd_op, 0, -1, -1 },
	{ "fchown32", "setattr", h_fd_op, 0, -1, -1 },
	{ "ftruncate", "setattr", h_fd_op, 0, 1, -1 },
	{ "ftruncate64", "setattr", h_fd_op, 0, 1, -1 },
	{ "getdents", "readdir", h_fd_op, 0, 2, -1 },
	{ "getdents64", "readdir", h_fd_op, 0, 2, -1 },
	{ "mkdir", "mkdir", h_path, -1, 0, -1 },
	{ "mkdirat", "mkdir", h_path, 0, 1, -1 },
	{ "rmdir", "rmdir", h_path, -1, 0, -1 },
	{ "unlink", "unlink", h_path, -1, 0, -1 },
	{ "unlinkat", "unlink", h_path, 0, 1, 2 },
	{ "readlink", "readlink", h_readlink, -1, 0, -1 },
	{ "readlinkat", "readlink", h_readlink, 0, 1, -1 },
	{ "rename", "rename", h_two_paths, -1, 0, -1 },
	{ "renameat", "rename", h_two_paths, 0, 1, 2 },
	{ "renameat2", "rename", h_two_paths, 0, 1, 2 },
	{ "link", "link", h_two_paths, -1, 0, -1 },
	{ "linkat", "link", h_two_paths, 0, 1, 2 },
	{ "symlink", "symlink", h_two_paths, -1, 1, -1 },
	{ "symlinkat", "symlink", h_two_paths, 1, 2, -1 },
	/* Extended attributes live in the inode: reading one is a stat, changing one a setattr. */
	{ "getxattr", "stat", h_path, -1, 0, -1 },
	{ "lgetxattr", "stat", h_path, -1, 0, -1 },
	{ "fgetxattr", "stat", h_fd_op, 0, -1, -1 },
	{ "listxattr", "stat", h_path, -1, 0, -1 },
	{ "llistxattr", "stat", h_path, -1, 0, -1 },
	{ "flistxattr", "stat", h_fd_op, 0, -1, -1 },
	{ "setxattr", "setattr", h_path, -1, 0, -1 },
	{ "lsetxattr", "setattr", h_path, -1, 0, -1 },
	{ "fsetxattr", "setattr", h_fd_op, 0, -1, -1 },
	{ "removexattr", "setattr", h_path, -1, 0, -1 },
	{ "lremovexattr", "setattr", h_path, -1, 0, -1 },
	{ "fremovexattr", "setattr", h_fd_op, 0, -1, -1 },
	/* mknod of a regular file (or a fifo or device node) makes a directory entry. */
	{ "mknod", "create", h_path, -1, 0, -1 },
	{ "mknodat", "create", h_path, 0, 1, -1 },
	{ "statfs", "other", h_path, -1, 0, -1 },
	{ "statfs64", "other", h_path, -1, 0, -1 },
	{ "fstatfs", "other", h_fd_op, 0, -1, -1 },
	{ "fstatfs64", "other", h_fd_op, 0, -1, -1 },
	{ "fallocate", "other", h_fd_op, 0, -1, -1 },
	{ "fadvise64", "other", h_fd_op, 0, -1, -1 },
	{ "flock", "other", h_fd_op, 0, -1, -1 },
	{ "mmap", "mmap", h_mmap, 1, -1, -1 },
	{ "mmap2", "mmap", h_mmap, 4096, -1, -1 },
	{ "clone", NULL, h_clone, 1, -1, -1 },
	{ "clone3", NULL, h_clone, 1, -1, -1 },
	{ "fork", NULL, h_clone, 0, -1, -1 },
	{ "vfork", NULL, h_clone, 0, -1, -1 },
	{ "execve", NULL, h_exec, -1, -1, -1 },
	{ "execveat", NULL, h_exec, -1, -1, -1 },
	{ "chdir", NULL, h_chdir, 1, -1, -1 },
	{ "fchdir", NULL, h_chdir, 0, -1, -1 },
	{ "pipe", NULL, h_other_fds, 0, -1, -1 },
	{ "pipe2", NULL, h_other_fds, 0, -1, -1 },
	{ "socketpair", NULL, h_other_fds, 3, -1, -1 },
	{ "socket", NULL, h_other_fds, -1, -1, -1 },
	{ "accept", NULL, h_other_fds, -1, -1, -1 },
	{ "accept4", NULL, h_other_fds, -1, -1, -1 },
	{ "epoll_create", NULL, h_other_fds, -1, -1, -1 },
	{ "epoll_create1", NULL, h_other_fds, -1, -1, -1 },
	{ "eventfd", NULL, h_other_fds, -1, -1, -1 },
	{ "eventfd2", NULL, h_other_fds, -1, -1, -1 },
	{ "signalfd", NULL, h_other_fds, -1, -1, -1 },
	{ "signalfd4", NULL, h_other_fds, -1, -1, -1 },
	{ "timerfd_create", NULL, h_other_fds, -1, -1, -1 },
	{ "inotify_init", NULL, h_other_fds, -1, -1, -1 },
	{ "inotify_init1", NULL, h_other_fds, -1, -1, -1 },
	{ "memfd_create", NULL, h_other_fds, -1, -1, -1 },
	{ "userfaultfd", NULL, h_other_fds, -1, -1, -1 },
	{ "pidfd_open", NULL, h_other_fds, -1, -1, -1 },
	{ "perf_event_open", NULL, h_other_fds, -1, -1, -1 },
	{ "io_uring_setup", NULL, h_other_fds, -1, -1, -1 },
	{ "fanotify_init", NULL, h_other_fds, -1, -1, -1 },
};

enum { INDEX_SIZE = 512 };
static const struct sysdesc *index_slots[INDEX_SIZE];
static int indexed;

static size_t hash_name(const char *p, size_t len)
{
	size_t h = 5381;

	for (size_t i = 0; i < len; i++)
		h = h * 33 + (unsigned char)p[i];
	return h & (INDEX_SIZE - 1);
}

static void build_index(void)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		size_t h = hash_name(table[i].name, strlen(table[i].name));

		while (index_slots[h])
			h = (h + 1) & (INDEX_SIZE - 1);
		index_slots[h] = &table[i];
	}
	indexed = 1;
}

const struct sysdesc *syscall_lookup(struct span name)
{
	size_t h;

	if (!indexed)
		build_index();
	for (h = hash_name(name.p, name.len); index_slots[h]; h = (h + 1) & (INDEX_SIZE - 1))
		if (span_eq(name, index_slots[h]->name))
			return index_slots[h];
	return NULL;
}
