/*
 * syncs.c - what each sync had to make durable (syncs.py says what the kinds mean), in one
 * pass over the events in trace order with a state per file, where the vectorized form
 * sorted every read, write, sync and create by file and summed each stretch apart.
 *
 * A file's stretch is its events since its previous sync, up to and including the next.
 * At a sync the stretch is judged: clean when it wrote no bytes; else metadata when it
 * created the file, grew it (a write ended past every end any access reached in the
 * file's earlier stretches) or the sync is a full one; else data.  Its runs are the
 * writes that did not begin where the stretch's previous write ended: the separate
 * stretches of the file the sync writes back (a database's pages, scattered, are many).
 * Its requests are its writes that moved bytes: how finely they were written decides the
 * pages the cache holds them in, and so what writing them back costs.
 */
#include <stdint.h>
#include <stdlib.h>

#include "events.h"

enum { METADATA = 0, DATA = 1, CLEAN = 2 };

struct stretch {
	int64_t dirty;     /* bytes written in this stretch */
	int64_t write_end; /* the largest end of a write in it, 0 if none */
	int64_t reached;   /* the largest end of any access in it */
	int64_t before;    /* the largest end any access reached in the file's earlier stretches */
	int64_t last_sync; /* the row of the file's previous sync, or -1 */
	int64_t runs;      /* writes in it that did not begin where its previous write ended */
	int64_t requests;  /* writes in it that moved bytes */
	int64_t next;      /* where its previous write ended, -1 before its first */
	uint8_t created;
};

/*
 * For each successful sync, in trace order (`order`, or the rows' own order when NULL):
 * sync_row[k] its row, kind[k] (METADATA, DATA or CLEAN), bytes[k] what its stretch wrote,
 * runs[k] the stretch's runs of writes, requests[k] its writes that moved bytes,
 * previous[k] the row of the same file's previous sync or -1.  `full[orig[i]]` says
 * whether a sync call commits metadata (fsync) or the data alone (fdatasync).  Returns the
 * number of syncs, or -1 when out of memory.
 */
int64_t fsbm_sync_kinds(int64_t n, const int64_t *order, const int8_t *op, const uint8_t *failed,
			const int32_t *file, int64_t n_files, const int32_t *orig, const uint8_t *full,
			const int64_t *offset, const int64_t *ret, int8_t op_read, int8_t op_write, int8_t op_fsync,
			int8_t op_create, int64_t *sync_row, int8_t *kind, int64_t *bytes, int64_t *runs,
			int64_t *requests, int64_t *previous)
{
	struct stretch *files = calloc((size_t)(n_files > 0 ? n_files : 1), sizeof(*files));
	int64_t syncs = 0;

	if (!files)
		return -1;
	for (int64_t f = 0; f < n_files; f++)
		files[f].last_sync = files[f].next = -1;
	for (int64_t k = 0; k < n; k++) {
		int64_t i = order ? order[k] : k;
		int8_t o = op[i];

		if (failed[i] || (o != op_read && o != op_write && o != op_fsync && o != op_create))
			continue;
		struct stretch *s = &files[file[i]];
		int64_t moved = ret[i] > 0 ? ret[i] : 0;
		int64_t end = offset[i] != MISSING && o != op_create ? offset[i] + moved : 0;

		if (end > s->reached)
			s->reached = end;
		if (o == op_create)
			s->created = 1;
		if (o == op_write) {
			s->dirty += moved;
			if (end > s->write_end)
				s->write_end = end;
			if (moved > 0) {
				s->requests++;
				if (offset[i] == MISSING || offset[i] != s->next)
					s->runs++;
				s->next = offset[i] == MISSING ? -1 : end;
			}
		}
		if (o != op_fsync)
			continue;
		int grew = s->created || s->write_end > s->before;

		sync_row[syncs] = i;
		kind[syncs] = s->dirty == 0 ? CLEAN : grew || full[orig[i]] ? METADATA : DATA;
		bytes[syncs] = s->dirty;
		runs[syncs] = s->runs;
		requests[syncs] = s->requests;
		previous[syncs] = s->last_sync;
		syncs++;
		if (s->reached > s->before)
			s->before = s->reached;
		s->dirty = s->write_end = s->reached = s->runs = s->requests = 0;
		s->next = -1;
		s->created = 0;
		s->last_sync = i;
	}
	free(files);
	return syncs;
}
