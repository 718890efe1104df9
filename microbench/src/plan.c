/*
 * plan.c - reading a replay plan (format in plan.h), with errors that name the line.
 */
#include "plan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *const plan_kind_names[OP_KINDS] = {
	"open", "close", "read", "write", "fsync", "fdatasync", "stat", "lstat", "fstat",
	"access", "unlink", "mkdir", "rmdir", "rename", "link", "symlink", "readlink",
	"readdir", "getdents", "truncate", "ftruncate", "chmod", "utimes", "mmap", "copy",
};

enum { MAX_FIELDS = 14 };

struct reader {
	const char *file;
	size_t line;
};

static int bad(const struct reader *r, const char *what)
{
	return fail_msg("%s:%zu: %s", r->file, r->line, what);
}

/* Undo the \t, \n and \\ escapes in place. */
static int unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s != '\\') {
			*out++ = *s;
			continue;
		}
		s++;
		if (*s == 't')
			*out++ = '\t';
		else if (*s == 'n')
			*out++ = '\n';
		else if (*s == '\\')
			*out++ = '\\';
		else
			return -1;
	}
	*out = '\0';
	return 0;
}

static int to_i64(const char *text, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(text, &end, 10);
	return (errno || end == text || *end) ? -1 : 0;
}

static const char *keep(struct plan *p, const char *s)
{
	if (p->n_strings == p->cap_strings) {
		p->cap_strings = p->cap_strings ? 2 * p->cap_strings : 1024;
		p->strings = realloc(p->strings, p->cap_strings * sizeof(*p->strings));
		if (!p->strings)
			die("out of memory");
	}
	return p->strings[p->n_strings++] = xstrdup(s);
}

static int kind_of(const char *name)
{
	for (int k = 0; k < OP_KINDS; k++)
		if (strcmp(plan_kind_names[k], name) == 0)
			return k;
	return -1;
}

static int parse_op(struct plan *p, const struct reader *r, char **f, int n)
{
	int64_t v[9];
	struct plan_op *op;
	int kind;

	if (n != 14)
		return bad(r, "an O line has 14 tab-separated fields");
	kind = kind_of(f[2]);
	if (kind < 0)
		return bad(r, "unknown operation kind (see plan_kind_names)");
	for (int i = 0; i < 9; i++)
		if (to_i64(f[i == 0 ? 1 : i + 2], &v[i]) != 0)
			return bad(r, "expected an integer field");
	if (v[0] < 0 || (uint64_t)v[0] >= p->actors || v[1] < -1 || v[1] >= (int64_t)p->handles)
		return bad(r, "actor or handle out of range (check the actors and handles lines)");
	if (v[8] < -1 || v[8] >= (int64_t)p->n_ops)
		return bad(r, "dep must name an earlier operation");
	if (kind == OP_COPY && (v[1] < 0 || v[2] < 0 || v[2] >= (int64_t)p->handles))
		return bad(r, "a copy names its destination's handle and, in flags, its source's");
	if (v[5] < 0 || (kind != OP_MMAP && kind != OP_COPY && (uint64_t)v[5] > p->max_io))
		return bad(r, "size out of range (check the maxio line)");
	if (unescape(f[12]) || unescape(f[13]))
		return bad(r, "bad escape in a path (only \\t, \\n and \\\\)");
	if (p->n_ops == p->cap_ops) {
		p->cap_ops = p->cap_ops ? 2 * p->cap_ops : 4096;
		p->ops = realloc(p->ops, p->cap_ops * sizeof(*p->ops));
		if (!p->ops)
			die("out of memory");
	}
	op = &p->ops[p->n_ops++];
	*op = (struct plan_op){
		.actor = (uint32_t)v[0], .kind = (uint8_t)kind, .handle = (int32_t)v[1], .flags = (int32_t)v[2],
		.mode = (uint32_t)v[3], .offset = v[4], .size = (uint64_t)v[5], .expect_errno = (int32_t)v[6],
		.think_ns = v[7] > 0 ? (uint64_t)v[7] : 0, .dep = v[8], .timed = strcmp(f[11], "0") != 0,
		.path = keep(p, f[12]), .path2 = keep(p, f[13]),
	};
	return 0;
}

static int parse_entry(struct plan *p, const struct reader *r, char **f, int n)
{
	int64_t size = -1;
	const char *path, *target = NULL;

	switch (f[0][0]) {
	case 'D':
		if (n != 2)
			return bad(r, "a D line is: D<tab>path");
		break;
	case 'F':
		if (n != 3 || to_i64(f[1], &size) || size < 0)
			return bad(r, "an F line is: F<tab>size<tab>path");
		break;
	default: /* 'L' */
		if (n != 3 || unescape(f[1]) || f[1][0] == '\0')
			return bad(r, "an L line is: L<tab>target<tab>path, the target not empty");
		target = f[1];
		size = 0;
	}
	path = f[n - 1];
	if (unescape((char *)path) || path[0] == '\0')
		return bad(r, "a tree entry needs a path (escapes: \\t, \\n, \\\\)");
	if (p->n_tree == p->cap_tree) {
		p->cap_tree = p->cap_tree ? 2 * p->cap_tree : 1024;
		p->tree = realloc(p->tree, p->cap_tree * sizeof(*p->tree));
		if (!p->tree)
			die("out of memory");
	}
	p->tree[p->n_tree++] = (struct plan_entry){ .size = size, .path = keep(p, path),
						    .target = target ? keep(p, target) : NULL };
	return 0;
}

static int parse_header(struct plan *p, const struct reader *r, char **f, int n)
{
	int64_t v;

	if (n != 2 || to_i64(f[1], &v) || v < 0 || v > UINT32_MAX * (strcmp(f[0], "maxio") == 0 ? 1024LL : 1LL))
		return bad(r, "expected: name<tab>non-negative integer");
	if (strcmp(f[0], "actors") == 0)
		p->actors = (uint32_t)v;
	else if (strcmp(f[0], "handles") == 0)
		p->handles = (uint32_t)v;
	else
		p->max_io = (uint64_t)v;
	return 0;
}

int plan_load(const char *path, struct plan *p)
{
	struct reader r = { .file = path, .line = 0 };
	char *line = NULL, *fields[MAX_FIELDS + 1], *s;
	size_t cap = 0;
	ssize_t len;
	int n, rc = 0;
	FILE *in = fopen(path, "r");

	memset(p, 0, sizeof(*p));
	if (!in)
		return fail_errno("open", path);
	while (rc == 0 && (len = getline(&line, &cap, in)) >= 0) {
		r.line++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if ((size_t)len != strlen(line)) {
			rc = bad(&r, "a NUL byte in the line");
			break;
		}
		for (n = 0, s = line; n <= MAX_FIELDS; n++) {
			fields[n] = s;
			s = strchr(s, '\t');
			if (!s) {
				n++;
				break;
			}
			*s++ = '\0';
		}
		if (n > MAX_FIELDS) {
			rc = bad(&r, "too many fields");
		} else if (r.line == 1) {
			if (n != 2 || strcmp(fields[0], "fsbm-replay-plan") || strcmp(fields[1], "1"))
				rc = bad(&r, "not an fsbm replay plan (the first line is \"fsbm-replay-plan<tab>1\")");
		} else if (strcmp(fields[0], "O") == 0) {
			rc = parse_op(p, &r, fields, n);
		} else if (!strcmp(fields[0], "D") || !strcmp(fields[0], "F") || !strcmp(fields[0], "L")) {
			rc = parse_entry(p, &r, fields, n);
		} else if (!strcmp(fields[0], "actors") || !strcmp(fields[0], "handles") || !strcmp(fields[0], "maxio")) {
			rc = parse_header(p, &r, fields, n);
		} else if (fields[0][0] != '#' && len > 0) {
			rc = bad(&r, "expected a line starting with O, D, F, L, actors, handles or maxio");
		}
	}
	if (rc == 0 && r.line == 0)
		rc = fail_msg("%s: empty, not a replay plan", path);
	if (rc == 0 && ferror(in))
		rc = fail_errno("read", path);
	free(line);
	fclose(in);
	if (rc != 0)
		plan_free(p);
	return rc;
}

void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->ops);
	free(p->tree);
	memset(p, 0, sizeof(*p));
}
