/*
 * ops.c - the statistics per operation and per original call (partial.py: _by_operation):
 * one pass that counts, and one that puts each operation's sizes and durations side by
 * side for their value counts, where numpy sorted every event by operation and gathered
 * each field apart.
 */
#include <stdint.h>
#include <stdlib.h>

#include "events.h"

/* The size an access reports: the bytes it moved where the call says, else the bytes asked. */
static int64_t reported_size(int64_t size, int64_t ret)
{
	return ret >= 0 ? ret : size;
}

/*
 * Per operation (op < n_ops): op_count, op_failed, op_bytes (the bytes the data operations,
 * is_data[op], moved: ret where positive); per original call: orig_count, orig_bytes (the
 * same bytes).  Each operation's sizes (data operations only) and durations, the known
 * ones, in trace order: sizes[size_start[o] .. size_start[o + 1]) and likewise durations.
 * The count arrays must be zeroed; size_start and dur_start have n_ops + 1 entries.
 * Returns 0, or -1 when out of memory.
 */
int fsbm_ops(int64_t n, const int8_t *op, int64_t n_ops, const uint8_t *is_data, const int32_t *orig,
	     const uint8_t *failed, const int64_t *size, const int64_t *ret, const int64_t *dur, int64_t *op_count,
	     int64_t *op_failed, int64_t *op_bytes, int64_t *orig_count, int64_t *orig_bytes, int64_t *size_start,
	     int64_t *sizes, int64_t *dur_start, int64_t *durations)
{
	int64_t *size_at = calloc((size_t)n_ops, sizeof(*size_at));
	int64_t *dur_at = calloc((size_t)n_ops, sizeof(*dur_at));

	if (!size_at || !dur_at) {
		free(size_at);
		free(dur_at);
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		int8_t o = op[i];
		int64_t moved = is_data[o] && ret[i] > 0 ? ret[i] : 0;

		op_count[o]++;
		op_failed[o] += failed[i];
		op_bytes[o] += moved;
		orig_count[orig[i]]++;
		orig_bytes[orig[i]] += moved;
		size_at[o] += is_data[o] && reported_size(size[i], ret[i]) != MISSING;
		dur_at[o] += dur[i] != MISSING;
	}
	size_start[0] = dur_start[0] = 0;
	for (int64_t o = 0; o < n_ops; o++) { /* counts become each group's start */
		int64_t sized = size_at[o], timed = dur_at[o];

		size_at[o] = size_start[o];
		dur_at[o] = dur_start[o];
		size_start[o + 1] = size_start[o] + sized;
		dur_start[o + 1] = dur_start[o] + timed;
	}
	for (int64_t i = 0; i < n; i++) {
		int8_t o = op[i];
		int64_t reported = reported_size(size[i], ret[i]);

		if (is_data[o] && reported != MISSING)
			sizes[size_at[o]++] = reported;
		if (dur[i] != MISSING)
			durations[dur_at[o]++] = dur[i];
	}
	free(size_at);
	free(dur_at);
	return 0;
}
