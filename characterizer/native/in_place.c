/*
 * in_place.c - which writes rewrite their file in place and follow on from its previous
 * write (in_place.py says why the predictor asks), in one pass over the events in trace
 * order with a state per file.
 *
 * A file's extent is what the trace has shown of it: the largest end any read or write of
 * it reached since a create last made it (an O_CREAT open is one) or a truncate cut it to
 * a length (which it then holds).  A write is in place when its bytes end within that
 * extent, and it follows on when it begins where the file's previous write ended.
 */
#include <stdint.h>
#include <stdlib.h>

#include "events.h"

struct extent {
	int64_t reached;  /* the largest end the file's accesses reached since it was made or cut */
	int64_t next;     /* where its previous write ended, -1 before its first (or after a cut) */
};

/*
 * For every event, in trace order (`order`, or the rows' own order when NULL), flags[i]
 * gets 1 for a successful write (not copy_orig[orig[i]], an in-kernel copy) that moved
 * bytes, ended within its file's extent and began where the file's previous write ended;
 * else 0.  A setattr with a size (size[i] != MISSING) is a truncate to it.  Returns the
 * number of such writes, or -1 when out of memory.
 */
int64_t fsbm_in_place(int64_t n, const int64_t *order, const int8_t *op, const uint8_t *failed, const int32_t *file,
		      int64_t n_files, const int32_t *orig, const uint8_t *copy_orig, const int64_t *offset,
		      const int64_t *size, const int64_t *ret, int8_t op_read, int8_t op_write, int8_t op_create,
		      int8_t op_setattr, uint8_t *flags)
{
	struct extent *files = calloc((size_t)(n_files > 0 ? n_files : 1), sizeof(*files));
	int64_t found = 0;

	if (!files)
		return -1;
	for (int64_t f = 0; f < n_files; f++)
		files[f].next = -1;
	for (int64_t k = 0; k < n; k++) {
		int64_t i = order ? order[k] : k;
		int8_t o = op[i];

		flags[i] = 0;
		if (failed[i] || file[i] < 0)
			continue;
		struct extent *x = &files[file[i]];

		if (o == op_create || (o == op_setattr && size[i] != MISSING)) {
			x->reached = o == op_create ? 0 : size[i];
			x->next = -1;
			continue;
		}
		if ((o != op_read && o != op_write) || offset[i] == MISSING || copy_orig[orig[i]])
			continue;
		int64_t moved = access_length(size[i], ret[i]);
		int64_t end = offset[i] + moved;

		if (o == op_write && moved > 0) {
			flags[i] = end <= x->reached && offset[i] == x->next;
			found += flags[i];
			x->next = end;
		}
		if (end > x->reached)
			x->reached = end;
	}
	free(files);
	return found;
}
