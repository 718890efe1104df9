/*
 * args.h - the parts of one complete strace call line: "name(args) = ret [ERRNO (text)]
 * [<duration>]", top-level argument splitting, strace's string escapes, fd annotations.
 */
#ifndef S2E_ARGS_H
#define S2E_ARGS_H

#include <stddef.h>
#include <stdint.h>

enum { MAX_ARGS = 8, ERRNO_MAX = 32 };

struct span {
	const char *p;
	size_t len;
};

struct call {
	struct span name;
	struct span args;          /* between the parentheses */
	struct span arg[MAX_ARGS]; /* top-level arguments */
	int nargs;
	int ret_known;             /* 0 for "= ?" */
	int64_t ret;
	struct span ret_path;      /* -y: "= 3</etc/passwd>" */
	char err[ERRNO_MAX];       /* "ENOENT", or "" */
	int64_t dur_ns;            /* -T, or -1 */
};

/* Parse a complete call body; returns 0, or -1 with *why saying what was expected. */
int call_parse(const char *body, size_t len, struct call *c, const char **why);

int span_eq(struct span s, const char *text);
/* Decimal or 0x hex, optionally negative; 0 on success. */
int span_int(struct span s, int64_t *v);
/* An fd argument: "3", "3</path>", "AT_FDCWD" (-100).  *path is empty when not annotated. */
int span_fd(struct span s, int64_t *fd, struct span *path);
/* A quoted string argument decoded into out (NUL-terminated): printable bytes as
 * themselves, others as \xNN so the result is one line of text.  0 if it is a string. */
int span_string(struct span s, char *out, size_t cap);
/* Does the argument text contain `word` (for flag sets like O_CREAT|O_TRUNC)? */
int span_has(struct span s, const char *word);
/* Sum of every "iov_len=N" in an iovec argument. */
int64_t span_iov_total(struct span s);

#endif
