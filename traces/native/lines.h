/*
 * lines.h - split one strace output line into its pid, its timestamp and its body.
 * Handles "[pid N] ", "N  " (strace -f), "-t" (HH:MM:SS), "-tt" (HH:MM:SS.us) and
 * "-ttt" (epoch.us) prefixes, in any combination strace writes them.
 */
#ifndef S2E_LINES_H
#define S2E_LINES_H

#include <stddef.h>
#include <stdint.h>

enum line_kind {
	LINE_SYSCALL,     /* name(args) = ret ... */
	LINE_UNFINISHED,  /* name(args <unfinished ...>, or <detached ...> */
	LINE_RESUMED,     /* <... name resumed> rest = ret */
	LINE_SIGNAL,      /* --- SIGxxx {...} --- */
	LINE_EXIT,        /* +++ exited with N +++ / +++ killed by SIGx +++ */
	LINE_INFO,        /* strace: Process N attached, and the like */
	LINE_BLANK,
	LINE_BAD,
};

struct line {
	enum line_kind kind;
	long pid;          /* -1 when the log has no pid column */
	int64_t ts_ns;     /* -1 when the log has no timestamps */
	int ts_of_day;     /* 1 for -t/-tt (time of day), 0 for -ttt (epoch) */
	const char *body;  /* after the prefixes */
	size_t body_len;
	const char *why;   /* LINE_BAD: what was expected */
	size_t marker_len; /* LINE_UNFINISHED: length of the trailing marker */
	int attached_midline; /* old strace: "clone(Process N attached", the call goes on next line */
};

/* Classify `text` (len bytes, no newline).  Never reads past len. */
void line_split(const char *text, size_t len, struct line *out);

#endif
