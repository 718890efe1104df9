/*
 * reader.h - a text file, gzip-compressed or plain, read a line at a time.
 *
 * It reads in large chunks and splits them on newlines with memchr: faster than gzgets, and
 * a NUL byte stays inside its line (where line_split reports binary data) instead of ending
 * it.  A line longer than the buffer grows it.  A last line without its newline (a file cut
 * short) is handed out too, marked cut_short.
 */
#ifndef S2E_READER_H
#define S2E_READER_H

#include <stddef.h>
#include <zlib.h>

struct reader {
	gzFile in;
	char *buf;
	size_t cap, len, start; /* buf[start, len) is read and not yet handed out */
	long line;              /* the lines handed out so far: the current line's number */
	const char *text;       /* the current line, without its newline */
	size_t text_len;
	int cut_short;          /* the current line is the last and has no newline */
};

/* Read `in` with a first buffer of `first_cap` bytes. */
void reader_init(struct reader *r, gzFile in, size_t first_cap);
/* The next line into r->text; 1, or 0 at the end, or -1 where the compressed data is damaged
 * (reader_error says how). */
int reader_next(struct reader *r);
/* Why the last reader_next failed. */
const char *reader_error(struct reader *r);
/* Frees the buffer; closing `in` is the caller's. */
void reader_free(struct reader *r);

#endif
