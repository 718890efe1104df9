/*
 * alloc.h - allocation that does not come back empty: without memory the parse cannot go on,
 * so it stops with a message instead.
 */
#ifndef S2E_ALLOC_H
#define S2E_ALLOC_H

#include <stdio.h>
#include <stdlib.h>

static inline void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size ? size : 1);

	if (!q) {
		fputs("strace2events: out of memory\n", stderr);
		exit(1);
	}
	return q;
}

#endif
