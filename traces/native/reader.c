/*
 * reader.c - a text file read a line at a time (reader.h).
 */
#include "reader.h"

#include <string.h>

#include "alloc.h"

void reader_init(struct reader *r, gzFile in, size_t first_cap)
{
	*r = (struct reader){ .in = in, .cap = first_cap };
	r->buf = xrealloc(NULL, r->cap);
}

int reader_next(struct reader *r)
{
	int at_end = 0;

	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->len - r->start);

		if (nl || (at_end && r->len > r->start)) {
			r->text = r->buf + r->start;
			r->text_len = nl ? (size_t)(nl - r->text) : r->len - r->start;
			r->cut_short = !nl;
			r->start = nl ? (size_t)(nl - r->buf) + 1 : r->len;
			r->line++;
			return 1;
		}
		if (at_end)
			return 0;
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
		if (r->len == r->cap) { /* one line longer than the buffer: grow it */
			r->cap *= 2;
			r->buf = xrealloc(r->buf, r->cap);
		}
		int got = gzread(r->in, r->buf + r->len, (unsigned)(r->cap - r->len));

		if (got < 0)
			return -1;
		at_end = got == 0;
		r->len += (size_t)got;
	}
}

const char *reader_error(struct reader *r)
{
	int errnum;

	return gzerror(r->in, &errnum);
}

void reader_free(struct reader *r)
{
	free(r->buf);
	r->buf = NULL;
}
