/*
 * strace2events - strace text (plain or gzip) in, one TSV row per file operation out.
 *
 * Columns: seq ts dur actor op orig file path path2 offset size ret errno line, empty
 * when unknown.  Every read/write carries the offset the kernel used (fd tables, dup,
 * fork, O_APPEND and lseek are followed in procs.c).  Lines that are not strace output
 * stop the parse with "FILE:LINE: what was expected" (exit 2), or with --keep-going are
 * counted and skipped.  Counts go to --stats FILE as JSON.  Each --pseudo PREFIX names
 * files that are not filesystem work (devices, /proc, pipes): their events are still
 * written, but the timeline counts their calls' time as the program's own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "alloc.h"
#include "args.h"
#include "events.h"
#include "forks.h"
#include "lines.h"
#include "merge.h"
#include "procs.h"
#include "reader.h"
#include "timeline.h"

enum { EXIT_BAD_INPUT = 2, SNIFF_LINES = 20, REPORTED_ERRORS = 5, MAX_PSEUDO = 16, EXCERPT_CHARS = 160 };
/* At most this much of children's lines is held for clones to return; past it they are parsed as
 * they come (a child with an unknown fd table, as before the clone's return was waited for). */
static const size_t HELD_BYTES_CAP = 64u << 20;
static const int64_t DAY_NS = 86400LL * 1000000000LL;

struct stats {
	long lines, events, bad_lines, ignored_calls, signals, exits, restarted;
	long resumed_without_start, lost_unfinished, unfinished_at_end, good_lines;
	int ts_epoch, ts_of_day;
	char first_errors[REPORTED_ERRORS][512];
	int nerrors;
};

struct parser {
	const char *name;
	long default_pid;
	int keep_going;
	int64_t day_offset, last_tod;
	int saw_unprefixed;       /* lines without a pid came first (strace -f, one process so far) */
	int unprefixed_resolved;  /* ... and we have learnt which pid that process has */
	long continuation_pid;    /* old strace split a call over two lines; -1 when not */
	struct procs procs;
	struct timeline timeline;
	/* The same calls with their durations left out: the timeline strace without -T would have
	 * given of the same run, so that a log with -T is read both ways (predictor/tracing.py). */
	struct timeline untimed;
	struct stats st;
	long seq;
	const char *pseudo[MAX_PSEUDO]; /* prefixes of files that are not filesystem work */
	size_t pseudo_len[MAX_PSEUDO];
	int npseudo;
	struct line_key key;      /* per-process logs: the line being parsed (merge.h) */
	int keys;                 /* write each event's key after its columns */
	int clones_only;          /* write only "PID<TAB>CHILD<TAB>SHARES" for each process a call made */
	struct held *held;        /* lines of children whose clone has not returned yet (hold_line) */
	size_t nheld, held_cap, held_bytes;
	int holding;              /* one log of strace -f: a child's lines may come before its clone returns */
	int releasing;            /* parsing held lines: hold none again */
};

/* A line held back until the clone that made its process returns (hold_line). */
struct held {
	long pid, line;
	int cut_short, done;
	size_t len;
	char *text;
};

/* -- output: a plain buffer, because fprintf per field is the bottleneck at 1M lines/s -- */

static char outbuf[1 << 16];
static size_t outlen;

static void out_flush(void)
{
	if (outlen && fwrite(outbuf, 1, outlen, stdout) != outlen) {
		fprintf(stderr, "strace2events: writing the events failed: %s\n", strerror(errno));
		exit(1);
	}
	outlen = 0;
}

static void out_bytes(const char *s, size_t n)
{
	if (outlen + n > sizeof(outbuf))
		out_flush();
	if (n > sizeof(outbuf)) {
		fwrite(s, 1, n, stdout);
		return;
	}
	memcpy(outbuf + outlen, s, n);
	outlen += n;
}

/* How many bytes of a well-formed UTF-8 sequence start at p (1-4), or 0 if none does. */
static int utf8_length(const unsigned char *p)
{
	int n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 :
		p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0; /* overlong, a surrogate, or past U+10FFFF */
	return n;
}

/* A text field: tabs, newlines and other control bytes, and bytes that are not UTF-8 (a
 * path is bytes to the kernel), become \xNN, so rows stay rows and the table stays text. */
static void out_text(const char *s)
{
	char esc[5];

	if (!s)
		return;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		const unsigned char *run = p;
		int n;

		while (*p >= 0x20 && *p < 0x7f) /* printable ASCII, most of any path: copied as a run */
			p++;
		if (p > run)
			out_bytes((const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		n = utf8_length(p);

		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
			out_bytes(esc, 4);
			p++;
		} else {
			out_bytes((const char *)p, (size_t)n);
			p += n;
		}
	}
}

static void out_int(int64_t v)
{
	char tmp[24];
	size_t at = sizeof(tmp); /* digits are written from the end, then copied once */
	uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;

	if (v == NO_VALUE)
		return;
	do {
		tmp[--at] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--at] = '-';
	out_bytes(tmp + at, sizeof(tmp) - at);
}

static void out_tab(void)
{
	out_bytes("\t", 1);
}

static void emit(struct parser *ps, const struct event *e)
{
	out_int(ps->seq++); out_tab();
	out_int(e->ts); out_tab();
	out_int(e->dur); out_tab();
	out_int(e->pid); out_tab();
	out_text(e->op); out_tab();
	out_bytes(e->orig.p, e->orig.len); out_tab();
	out_text(e->file); out_tab();
	out_text(e->path); out_tab();
	out_text(e->path2); out_tab();
	out_int(e->offset); out_tab();
	out_int(e->size); out_tab();
	out_int(e->ret); out_tab();
	out_text(e->err && e->err[0] ? e->err : NULL); out_tab();
	out_int(e->line);
	if (ps->keys) {
		out_tab();
		out_int(ps->key.ns); out_tab();
		out_int(ps->key.line); out_tab();
		out_int(ps->key.pid);
	}
	out_bytes("\n", 1);
	ps->st.events++;
}

/* -- errors ------------------------------------------------------------------------ */

/* What a bad line held, for its message: the first EXCERPT_CHARS, anything unprintable as '?'. */
static void excerpt_of(const char *text, size_t len, char *out, size_t cap)
{
	size_t n = len < EXCERPT_CHARS ? len : EXCERPT_CHARS, k = 0;

	for (size_t i = 0; i < n && k + 4 < cap; i++)
		out[k++] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
	if (n < len && k + 4 < cap)
		k += (size_t)snprintf(out + k, cap - k, "...");
	out[k] = '\0';
}

/* A line that is no strace line: `text` is what it held (the whole call, where a resumed
 * call was glued to its start). */
static void bad_line(struct parser *ps, long line, const char *why, const char *text, size_t len, int cut_short)
{
	char msg[512], held[EXCERPT_CHARS + 8];

	excerpt_of(text, len, held, sizeof(held));
	snprintf(msg, sizeof(msg), "%s:%ld: %s%s, in: %s", ps->name, line, why,
		 cut_short ? " (the file ends mid-line: is it truncated?)" : "", held);
	ps->st.bad_lines++;
	if (!ps->keep_going) {
		out_flush();
		fprintf(stderr, "%s\n", msg);
		exit(EXIT_BAD_INPUT);
	}
	if (ps->st.nerrors < REPORTED_ERRORS)
		snprintf(ps->st.first_errors[ps->st.nerrors++], sizeof(msg), "%s", msg);
	if (ps->st.good_lines == 0 && ps->st.bad_lines >= SNIFF_LINES) {
		out_flush();
		fprintf(stderr, "%s: does not look like strace output (the first %d lines are not strace lines; "
			"the first: %s)\n", ps->name, SNIFF_LINES, ps->st.first_errors[0]);
		exit(EXIT_BAD_INPUT);
	}
}

/* -- one call --------------------------------------------------------------------- */

/* A read from a pipe or socket, or a write to one, waits for the process at its other end
 * (for data, or for room). */
static int waits_on_a_pipe(struct parser *ps, long pid, const struct call *c)
{
	struct span path;
	struct ofd *o;
	int64_t fd;

	if (!(span_eq(c->name, "read") || span_eq(c->name, "readv") || span_eq(c->name, "write") ||
	      span_eq(c->name, "writev")) || c->nargs < 1 ||
	    span_fd(c->arg[0], &fd, &path) != 0)
		return 0;
	if (path.len)
		return (path.len >= 5 && memcmp(path.p, "pipe:", 5) == 0) ||
		       (path.len >= 7 && memcmp(path.p, "socket:", 7) == 0);
	o = fd_get(procs_get(&ps->procs, pid), fd);
	return o && o->kind == OFD_OTHER;
}

static int is_pseudo(const struct parser *ps, const char *file)
{
	for (int i = 0; i < ps->npseudo; i++)
		if (strncmp(file, ps->pseudo[i], ps->pseudo_len[i]) == 0)
			return 1;
	return 0;
}

/*
 * --clones: the processes each process made, and whether each shares its maker's fd table
 * or working directory (then the two are one process group: forks.h).  The same test as the
 * fd tables' (syscalls.c h_clone).
 */
/* Whether a call of this name makes a process: clone, clone3, fork, vfork. */
static int makes_a_process(struct span name)
{
	return span_eq(name, "clone") || span_eq(name, "clone3") || span_eq(name, "fork") || span_eq(name, "vfork");
}

static void list_clone(long pid, const struct call *c)
{
	int clone = span_eq(c->name, "clone") || span_eq(c->name, "clone3");
	char row[64];

	if (!makes_a_process(c->name) || !c->ret_known || c->ret <= 0)
		return;
	snprintf(row, sizeof(row), "%ld\t%lld\t%d\n", pid, (long long)c->ret,
		 clone && (span_has(c->args, "CLONE_FILES") || span_has(c->args, "CLONE_FS")));
	out_bytes(row, strlen(row));
}

/* Turn one call into an event when it acts on a file; where it did so on a real one, the
 * event's operation (the vocabulary's: "read", "mmap"...), else NULL. */
static const char *emit_call(struct parser *ps, long pid, const struct call *c, const struct sysdesc *d, int64_t ts,
			     int64_t dur_fallback, long line)
{
	static struct event e;
	int emitted;

	if (!d) {
		ps->st.ignored_calls++;
		return NULL;
	}
	if (strncmp(c->err, "ERESTART", 8) == 0) { /* interrupted, did not complete */
		ps->st.restarted++;
		return NULL;
	}
	e.ts = ts;
	e.dur = c->dur_ns >= 0 ? c->dur_ns : dur_fallback;
	e.pid = pid;
	e.op = d->op;
	e.orig = c->name;
	e.file = e.path = e.path2 = NULL;
	e.offset = e.size = NO_VALUE;
	e.ret = c->ret_known ? c->ret : NO_VALUE;
	e.err = c->err;
	e.line = line;
	emitted = d->handle(procs_get(&ps->procs, pid), c, d, &e) && e.op && e.file;
	forks_call_done(emitted ? ps->seq : -1);
	if (!emitted)
		return NULL;
	emit(ps, &e);
	return is_pseudo(ps, e.file) ? NULL : e.op;
}

/*
 * One complete call: its event, then its place in the timeline.  Whether it waited on a
 * pipe is read from the fd table before the call changes it; whether it was filesystem
 * work, from the event: a call the predictor prices is not the program's own time.
 */
static void handle_call(struct parser *ps, long pid, const char *body, size_t len, int64_t ts,
			int64_t dur_fallback, long line, int cut_short)
{
	struct call c;
	const struct sysdesc *d;
	const char *why, *file_op;
	struct call_kind kind;
	int waits;

	if (call_parse(body, len, &c, &why) != 0) {
		bad_line(ps, line, why, body, len, cut_short);
		return;
	}
	ps->st.good_lines++;
	if (ps->clones_only) {
		list_clone(pid, &c);
		return;
	}
	d = syscall_lookup(c.name);
	waits = timeline_waits(&c) || waits_on_a_pipe(ps, pid, &c);
	file_op = emit_call(ps, pid, &c, d, ts, dur_fallback, line);
	kind = timeline_kind(&c, file_op, waits);
	timeline_call(&ps->timeline, pid, ts, c.dur_ns, dur_fallback, &kind);
	timeline_call(&ps->untimed, pid, ts, -1, dur_fallback, &kind);
}

static int64_t line_time(struct parser *ps, const struct line *ln)
{
	int64_t ts = ln->ts_ns;

	if (ts < 0)
		return NO_VALUE;
	if (!ln->ts_of_day) {
		ps->st.ts_epoch = 1;
		return ts;
	}
	ps->st.ts_of_day = 1;
	/* -t/-tt give the time of day: a jump back of over 12 h is midnight passing. */
	if (ps->last_tod >= 0 && ts + ps->day_offset < ps->last_tod - DAY_NS / 2)
		ps->day_offset += DAY_NS;
	ts += ps->day_offset;
	ps->last_tod = ts;
	return ts;
}

static void keep_unfinished(struct proc *p, const struct line *ln, int64_t ts, long line, struct stats *st)
{
	size_t len = ln->body_len - ln->marker_len;

	if (p->pending_len)
		st->lost_unfinished++;
	if (len + 1 > p->pending_cap) {
		p->pending_cap = len + 256;
		p->pending = xrealloc(p->pending, p->pending_cap);
	}
	memcpy(p->pending, ln->body, len);
	p->pending_len = len;
	p->pending_ts = ts;
	p->pending_line = line;
}

/* Glue `rest` to the waiting start of a call and handle the whole call. */
static void resume_with(struct parser *ps, long pid, struct proc *p, const struct line *rest, int64_t ts,
			long line, int cut_short)
{
	static char *joined;
	static size_t joined_cap;
	size_t need = p->pending_len + rest->body_len + 1;

	(void)line;
	if (need > joined_cap) {
		joined_cap = need * 2;
		joined = realloc(joined, joined_cap);
		if (!joined) {
			fputs("strace2events: out of memory\n", stderr);
			exit(1);
		}
	}
	memcpy(joined, p->pending, p->pending_len);
	memcpy(joined + p->pending_len, rest->body, rest->body_len);
	p->pending_len = 0;
	handle_call(ps, pid, joined, need - 1, p->pending_ts,
		    ts != NO_VALUE && p->pending_ts != NO_VALUE ? ts - p->pending_ts : NO_VALUE, p->pending_line,
		    cut_short);
}

/* "<... name resumed> rest": the rest of the call this pid left unfinished. */
static void resume(struct parser *ps, long pid, const struct line *ln, int64_t ts, long line, int cut_short)
{
	const char *b = ln->body + 5, *end = ln->body + ln->body_len;
	const char *mark = b;
	struct proc *p = procs_get(&ps->procs, pid);
	struct line rest;
	size_t name_len;

	while (mark < end && *mark != ' ')
		mark++;
	name_len = (size_t)(mark - b);
	if (end - mark < 9 || memcmp(mark, " resumed>", 9) != 0) {
		bad_line(ps, line, "expected '<... name resumed>'", ln->body, ln->body_len, cut_short);
		return;
	}
	mark += 9;
	if (!p->pending_len || p->pending_len < name_len || memcmp(p->pending, b, name_len) != 0 ||
	    p->pending[name_len] != '(') {
		ps->st.resumed_without_start++;
		ps->st.good_lines++;
		return;
	}
	rest = (struct line){ .kind = LINE_RESUMED, .body = mark, .body_len = (size_t)(end - mark) };
	resume_with(ps, pid, p, &rest, ts, line, cut_short);
}

static void parse_split_line(struct parser *ps, const char *text, size_t len, const struct line *split, long line,
			     int cut_short);

/* Whether a process has a clone, fork or vfork in flight: strace -f printed its start and not yet
 * its return, so the child it makes may already be running. */
static int clone_in_flight(const struct parser *ps)
{
	for (size_t i = 0; i < ps->procs.cap; i++) {
		const struct proc *p = &ps->procs.table[i];
		const char *paren = p->used && p->pending_len ? memchr(p->pending, '(', p->pending_len) : NULL;

		if (paren && makes_a_process((struct span){ p->pending, (size_t)(paren - p->pending) }))
			return 1;
	}
	return 0;
}

static int holds_pid(const struct parser *ps, long pid)
{
	for (size_t i = 0; i < ps->nheld; i++)
		if (ps->held[i].pid == pid)
			return 1;
	return 0;
}

/*
 * A line of a process the parse has not seen made, while a clone is in flight: strace -f prints
 * a child's calls as they end, and the child can run before its parent's clone returns, so its
 * first lines may come before "<... clone resumed> = PID" says whose child it is.  Parsed then,
 * they would find an empty fd table (an inherited descriptor names no file, an inherited offset
 * starts at 0).  Such lines are held, in order, until the clone returns (release_held).
 * Returns whether the line was held.
 */
static int hold_line(struct parser *ps, long pid, const char *text, size_t len, long line, int cut_short)
{
	char *copy;

	if (!ps->holding || ps->releasing || pid < 0 || !ps->procs.count || procs_known(&ps->procs, pid))
		return 0;
	if (!holds_pid(ps, pid) && !clone_in_flight(ps))
		return 0;
	if (ps->held_bytes + len > HELD_BYTES_CAP)
		return 0;
	if (ps->nheld == ps->held_cap) {
		ps->held_cap = ps->held_cap ? 2 * ps->held_cap : 64;
		ps->held = xrealloc(ps->held, ps->held_cap * sizeof(*ps->held));
	}
	copy = xrealloc(NULL, len);
	memcpy(copy, text, len);
	ps->held[ps->nheld++] = (struct held){ .pid = pid, .line = line, .cut_short = cut_short, .len = len,
					       .text = copy, .done = 0 };
	ps->held_bytes += len;
	return 1;
}

/* Parse the held lines of every process now known (its clone returned), with `all` every held
 * line (the log ended, or a parent's clone never returned), in the order they came: always the
 * first line held whose process is known, so a line that makes a child known (its parent's clone
 * returning) lets the child's earlier lines go before the lines that came after theirs. */
static void release_held(struct parser *ps, int all)
{
	size_t i = 0, known = ps->procs.count, kept = 0;

	if (ps->releasing)
		return;
	ps->releasing = 1;
	while (i < ps->nheld) {
		struct held *h = &ps->held[i];
		struct line ln;

		if (h->done || (!all && !procs_known(&ps->procs, h->pid))) {
			i++;
			continue;
		}
		line_split(h->text, h->len, &ln);
		parse_split_line(ps, h->text, h->len, &ln, h->line, h->cut_short);
		ps->held_bytes -= h->len;
		free(h->text);
		h->done = 1;
		if (ps->procs.count != known) { /* a process made known: its held lines may lie behind */
			known = ps->procs.count;
			i = 0;
		} else {
			i++;
		}
	}
	for (i = 0; i < ps->nheld; i++)
		if (!ps->held[i].done)
			ps->held[kept++] = ps->held[i];
	ps->nheld = kept;
	ps->releasing = 0;
}

/* One line, split already (lines.h): `ln` points into `text`. */
static void parse_split_line(struct parser *ps, const char *text, size_t len, const struct line *split, long line,
			     int cut_short)
{
	struct line ln = *split;
	long pid;
	int64_t ts;

	if (ps->continuation_pid >= 0) {
		/* The rest of a call old strace interrupted with "Process N attached". */
		struct proc *p = procs_get(&ps->procs, ps->continuation_pid);
		struct line rest = { .kind = LINE_RESUMED, .body = text, .body_len = len };

		pid = ps->continuation_pid;
		ps->continuation_pid = -1;
		if (ln.kind == LINE_BAD && p->pending_len) {
			resume_with(ps, pid, p, &rest, NO_VALUE, line, cut_short);
			return;
		}
	}
	if (ln.pid < 0) {
		ps->saw_unprefixed = 1;
	} else if (ps->saw_unprefixed && !ps->unprefixed_resolved && !holds_pid(ps, ln.pid) &&
		   (ln.kind == LINE_RESUMED || !clone_in_flight(ps))) {
		/* strace -f prints no pid while one process is traced; the first pid it prints
		 * that no clone created is that process.  While that process is in a clone, a
		 * line other than the clone's return is a child's, run before it returned, and so
		 * is every later line of a process whose lines are held (hold_line). */
		ps->unprefixed_resolved = 1;
		if (!ps->procs.count || !procs_known(&ps->procs, ln.pid))
			procs_rename(&ps->procs, ps->default_pid, ln.pid);
	}
	pid = ln.pid >= 0 ? ln.pid : ps->default_pid;
	if (ln.kind != LINE_BLANK && ln.kind != LINE_BAD && ln.kind != LINE_INFO && ln.pid >= 0 &&
	    hold_line(ps, pid, text, len, line, cut_short))
		return;
	switch (ln.kind) {
	case LINE_BLANK:
		return;
	case LINE_BAD:
		bad_line(ps, line, ln.why, text, len, cut_short);
		return;
	case LINE_INFO:
		ps->st.good_lines++;
		return;
	case LINE_SIGNAL:
		ps->st.signals++;
		ps->st.good_lines++;
		return;
	case LINE_EXIT:
		ps->st.exits++;
		ps->st.good_lines++;
		procs_exit(&ps->procs, pid);
		return;
	default:
		break;
	}
	ts = line_time(ps, &ln);
	if (ln.kind == LINE_UNFINISHED) {
		keep_unfinished(procs_get(&ps->procs, pid), &ln, ts, line, &ps->st);
		ps->st.good_lines++;
		if (ln.attached_midline)
			ps->continuation_pid = pid;
	} else if (ln.kind == LINE_RESUMED) {
		resume(ps, pid, &ln, ts, line, cut_short);
	} else {
		handle_call(ps, pid, ln.body, ln.body_len, ts, NO_VALUE, line, cut_short);
	}
	if (ps->nheld)
		release_held(ps, 0);
}

/* --clones: a line that names no clone or fork is only counted, not parsed. */
static int passed_over(struct parser *ps, const char *text, size_t len)
{
	if (!ps->clones_only || memmem(text, len, "clone", 5) || memmem(text, len, "fork(", 5))
		return 0;
	ps->st.good_lines++;
	return 1;
}

static void parse_line(struct parser *ps, const char *text, size_t len, long line, int cut_short)
{
	struct line ln;

	if (passed_over(ps, text, len))
		return;
	line_split(text, len, &ln);
	parse_split_line(ps, text, len, &ln, line, cut_short);
}

/* -- input ------------------------------------------------------------------------ */

/* One log, a line at a time (reader.h). */
static void parse_stream(struct parser *ps, gzFile in)
{
	struct reader rd;
	int got;

	reader_init(&rd, in, 1 << 20);
	ps->holding = 1;
	while ((got = reader_next(&rd)) > 0)
		parse_line(ps, rd.text, rd.text_len, rd.line, rd.cut_short);
	release_held(ps, 1);
	ps->holding = 0;
	free(ps->held);
	if (got < 0) {
		out_flush();
		fprintf(stderr, "%s: the compressed data is damaged after line %ld (%s)\n", ps->name, rd.line,
			reader_error(&rd));
		exit(EXIT_BAD_INPUT);
	}
	ps->st.lines = rd.line;
	reader_free(&rd);
}

/* The per-process logs of one strace -ff run, in time order (merge.h): each line is its own
 * log's, with its pid, and reported by that log's name and line number. */
static void parse_logs(struct parser *ps, const char *list)
{
	const char *run_name = ps->name;
	const struct pidlog *l;
	struct merge m;
	long lines = 0;

	merge_open(&m, list);
	while ((l = merge_next(&m)) != NULL) {
		ps->name = l->path;
		ps->default_pid = l->pid;
		ps->key = l->key;
		forks_line(&l->key);
		if (!passed_over(ps, l->rd.text, l->rd.text_len)) /* the merge split it to find its time */
			parse_split_line(ps, l->rd.text, l->rd.text_len, &l->split, l->key.line, l->rd.cut_short);
		lines++;
	}
	out_flush();
	ps->name = run_name;
	ps->st.lines = lines;
	merge_close(&m);
}

static void write_stats(const struct parser *ps, const char *path)
{
	FILE *f = fopen(path, "w");
	const struct stats *s = &ps->st;

	if (!f) {
		fprintf(stderr, "strace2events: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(f, "{\"lines\":%ld,\"events\":%ld,\"bad_lines\":%ld,\"ignored_calls\":%ld,\"signals\":%ld,"
		"\"exits\":%ld,\"restarted\":%ld,\"resumed_without_start\":%ld,\"lost_unfinished\":%ld,"
		"\"unfinished_at_end\":%ld,\"ts_origin\":\"%s\",\"first_errors\":[",
		s->lines, s->events, s->bad_lines, s->ignored_calls, s->signals, s->exits, s->restarted,
		s->resumed_without_start, s->lost_unfinished, s->unfinished_at_end,
		s->ts_epoch ? "epoch" : s->ts_of_day ? "time_of_day" : "none");
	for (int i = 0; i < s->nerrors; i++) {
		fputs(i ? ",\"" : "\"", f);
		for (const char *p = s->first_errors[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				fputc('\\', f);
			if ((unsigned char)*p >= 0x20)
				fputc(*p, f);
		}
		fputc('"', f);
	}
	fputs("],\"timeline\":", f);
	timeline_json(&ps->timeline, &ps->untimed, f);
	fputs("}\n", f);
	fclose(f);
}

static void usage(void)
{
	fputs("usage: strace2events [--keep-going] [--pid N] [--name NAME] [--stats FILE] [--pseudo PREFIX]... LOG|-\n"
	      "       strace2events --clones LOG|--logs LIST\n"
	      "       strace2events [options] --logs LIST [--keys] [--group N --forks-out DIR --shared-ops FILE\n"
	      "                     [--states LIST]]\n"
	      "--logs LIST names the per-process logs of one strace -ff run, one PID<TAB>PATH a line;\n"
	      "--states LIST the state each process group's first process starts from, ROOT<TAB>PATH.\n", stderr);
	exit(EXIT_BAD_INPUT);
}

int main(int argc, char **argv)
{
	struct parser ps;
	const char *input = NULL, *stats_path = NULL, *logs = NULL, *forks_dir = NULL, *ops_path = NULL;
	const char *states = NULL;
	long group = -1;
	gzFile in = NULL;

	memset(&ps, 0, sizeof(ps));
	ps.default_pid = 0;
	ps.last_tod = -1;
	ps.continuation_pid = -1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--keep-going") == 0)
			ps.keep_going = 1;
		else if (strcmp(argv[i], "--pid") == 0 && i + 1 < argc)
			ps.default_pid = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			ps.name = argv[++i];
		else if (strcmp(argv[i], "--stats") == 0 && i + 1 < argc)
			stats_path = argv[++i];
		else if (strcmp(argv[i], "--logs") == 0 && i + 1 < argc)
			logs = argv[++i];
		else if (strcmp(argv[i], "--keys") == 0)
			ps.keys = 1;
		else if (strcmp(argv[i], "--clones") == 0)
			ps.clones_only = 1;
		else if (strcmp(argv[i], "--group") == 0 && i + 1 < argc)
			group = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--forks-out") == 0 && i + 1 < argc)
			forks_dir = argv[++i];
		else if (strcmp(argv[i], "--shared-ops") == 0 && i + 1 < argc)
			ops_path = argv[++i];
		else if (strcmp(argv[i], "--states") == 0 && i + 1 < argc)
			states = argv[++i];
		else if (strcmp(argv[i], "--pseudo") == 0 && i + 1 < argc && ps.npseudo < MAX_PSEUDO) {
			ps.pseudo[ps.npseudo] = argv[++i];
			ps.pseudo_len[ps.npseudo++] = strlen(argv[i]);
		} else if (strcmp(argv[i], "--pseudo") == 0)
			usage();
		else if (argv[i][0] == '-' && argv[i][1] && !input)
			usage();
		else if (!input)
			input = argv[i];
		else
			usage();
	}
	if (!input == !logs || (group >= 0) != (forks_dir && ops_path) || (group >= 0 && !logs) ||
	    (states && group < 0))
		usage();
	if (!ps.name)
		ps.name = input ? input : logs;
	if (input) {
		in = strcmp(input, "-") == 0 ? gzdopen(0, "rb") : gzopen(input, "rb");
		if (!in) {
			fprintf(stderr, "%s: cannot open: %s\n", ps.name, strerror(errno));
			return EXIT_BAD_INPUT;
		}
		gzbuffer(in, 1 << 17);
	}
	procs_init(&ps.procs);
	timeline_init(&ps.timeline);
	timeline_init(&ps.untimed);
	syscalls_bind(&ps.procs);
	if (group >= 0)
		forks_start(group, forks_dir, ops_path, &ps.day_offset, &ps.last_tod);
	if (states)
		forks_load_all(states, &ps.procs, &ps.day_offset, &ps.last_tod);
	if (in) {
		parse_stream(&ps, in);
		gzclose(in);
	} else {
		parse_logs(&ps, logs);
	}
	forks_end();
	for (size_t i = 0; i < ps.procs.cap; i++)
		if (ps.procs.table[i].used && ps.procs.table[i].pending_len)
			ps.st.unfinished_at_end++;
	out_flush();
	procs_free(&ps.procs);
	if (ps.st.good_lines == 0 && ps.st.bad_lines > 0) {
		fprintf(stderr, "%s: does not look like strace output (no line of it is a strace line; the first: %s)\n",
			ps.name, ps.st.first_errors[0]);
		return EXIT_BAD_INPUT;
	}
	if (stats_path)
		write_stats(&ps, stats_path);
	timeline_free(&ps.timeline);
	timeline_free(&ps.untimed);
	return 0;
}
