/*
 * merge.c - per-process strace logs read as one stream in time order (merge.h).
 */
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "reader.h"

enum { EXIT_BAD_INPUT = 2, FIRST_BUFFER = 1 << 16 };

int key_before(const struct line_key *a, const struct line_key *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	if (a->line != b->line)
		return a->line < b->line;
	return a->pid < b->pid;
}

static void log_open(struct pidlog *l)
{
	gzFile in = gzopen(l->path, "rb");

	if (!in) {
		fprintf(stderr, "%s: cannot open: %s\n", l->path, strerror(errno ? errno : ENOMEM));
		exit(EXIT_BAD_INPUT);
	}
	gzbuffer(in, 1 << 15);
	reader_init(&l->rd, in, FIRST_BUFFER);
	l->last_ns = 0;
	l->key = (struct line_key){ 0, 0, l->pid };
}

static void log_close(struct pidlog *l)
{
	if (l->rd.in)
		gzclose(l->rd.in);
	l->rd.in = NULL;
	reader_free(&l->rd);
}

/* Read the log's next line into l->rd and key it; 0 at its end. */
static int log_advance(struct pidlog *l)
{
	int got = reader_next(&l->rd);

	if (got < 0) {
		fprintf(stderr, "%s: the compressed data is damaged after line %ld (%s)\n", l->path, l->rd.line,
			reader_error(&l->rd));
		exit(EXIT_BAD_INPUT);
	}
	if (!got)
		return 0;
	line_split(l->rd.text, l->rd.text_len, &l->split);
	if (l->split.ts_ns >= 0)
		l->last_ns = l->split.ts_ns;
	l->key.ns = l->last_ns;
	l->key.line = l->rd.line;
	return 1;
}

/* -- the heap of open logs, least key on top --------------------------------------- */

static int before(const struct merge *m, size_t i, size_t j)
{
	return key_before(&m->logs[m->heap[i]].key, &m->logs[m->heap[j]].key);
}

static void swap(struct merge *m, size_t i, size_t j)
{
	size_t t = m->heap[i];

	m->heap[i] = m->heap[j];
	m->heap[j] = t;
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t least = i, l = 2 * i + 1, r = l + 1;

		if (l < m->nheap && before(m, l, least))
			least = l;
		if (r < m->nheap && before(m, r, least))
			least = r;
		if (least == i)
			return;
		swap(m, i, least);
		i = least;
	}
}

static void push(struct merge *m, size_t log)
{
	size_t i = m->nheap++;

	m->heap[i] = log;
	while (i > 0 && before(m, i, (i - 1) / 2)) {
		swap(m, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void pop(struct merge *m)
{
	m->heap[0] = m->heap[--m->nheap];
	sift_down(m, 0);
}

/* -- the list of logs ---------------------------------------------------------------- */

static int by_first_key(const void *a, const void *b)
{
	const struct pidlog *x = a, *y = b;

	return key_before(&x->first, &y->first) ? -1 : key_before(&y->first, &x->first) ? 1 : 0;
}

void merge_open(struct merge *m, const char *list)
{
	FILE *f = fopen(list, "r");
	char *entry = NULL;
	size_t entry_cap = 0, cap = 0;
	ssize_t n;

	if (!f) {
		fprintf(stderr, "%s: cannot open: %s\n", list, strerror(errno));
		exit(EXIT_BAD_INPUT);
	}
	memset(m, 0, sizeof(*m));
	while ((n = getline(&entry, &entry_cap, f)) > 0) {
		char *tab = strchr(entry, '\t');
		struct pidlog *l;

		if (entry[n - 1] == '\n')
			entry[--n] = '\0';
		if (!tab) {
			fprintf(stderr, "%s: expected PID<TAB>PATH, got '%s'\n", list, entry);
			exit(EXIT_BAD_INPUT);
		}
		if (m->nlogs == cap) {
			cap = cap ? cap * 2 : 64;
			m->logs = xrealloc(m->logs, cap * sizeof(*m->logs));
		}
		l = &m->logs[m->nlogs];
		memset(l, 0, sizeof(*l));
		l->pid = strtol(entry, NULL, 10);
		l->path = strdup(tab + 1);
		/* Place it by its first line, then put it away until the stream gets there. */
		log_open(l);
		if (log_advance(l)) {
			l->first = l->key;
			m->nlogs++;
		} else {
			free(l->path); /* an empty log has no line to merge */
		}
		log_close(l);
	}
	free(entry);
	fclose(f);
	qsort(m->logs, m->nlogs, sizeof(*m->logs), by_first_key);
	m->heap = xrealloc(NULL, (m->nlogs ? m->nlogs : 1) * sizeof(*m->heap));
}

const struct pidlog *merge_next(struct merge *m)
{
	if (m->have_current) {
		struct pidlog *top = &m->logs[m->heap[0]];

		if (log_advance(top)) {
			sift_down(m, 0);
		} else {
			log_close(top);
			pop(m);
		}
	}
	while (m->unopened < m->nlogs &&
	       (m->nheap == 0 || key_before(&m->logs[m->unopened].first, &m->logs[m->heap[0]].key))) {
		struct pidlog *l = &m->logs[m->unopened];

		log_open(l);
		log_advance(l);
		push(m, m->unopened++);
	}
	m->have_current = m->nheap > 0;
	return m->nheap ? &m->logs[m->heap[0]] : NULL;
}

void merge_close(struct merge *m)
{
	for (size_t i = 0; i < m->nlogs; i++) {
		log_close(&m->logs[i]);
		free(m->logs[i].path);
	}
	free(m->logs);
	free(m->heap);
}
