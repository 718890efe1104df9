/*
 * classes.c - the data classes (classes.py says what each is and why the predictor asks),
 * summed in one pass over the classified accesses, where numpy gathered each access's
 * fields apart and made a dozen passes and bincounts over them.
 *
 * Each access gets a code: its class (read, write, copy), its order (sequential, forward,
 * random) and the bit length of its size, whose power of two is its size bucket.  Every
 * sum is kept per code.
 */
#include <stdint.h>

#include "access_flags.h"
#include "events.h"

#define BITS 65 /* bit lengths 0..64 */

enum { READ = 0, WRITE = 1, COPY = 2 };
enum { ORDER_SEQUENTIAL = 0, ORDER_FORWARD = 1, ORDER_RANDOM = 2 }; /* an access's order, classes.py's ORDERS */

static int bit_length(int64_t v)
{
	return v > 0 ? 64 - __builtin_clzll((uint64_t)v) : 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Whether a request touches more pages than an aligned request of its length would: a
 * 4096-byte write at offset 516 touches two, one at 8192 one. */
static int straddles(int64_t offset, int64_t length, int64_t page)
{
	int64_t last = floor_div(offset + (length > 1 ? length : 1) - 1, page);

	return length > 0 && last - floor_div(offset, page) + 1 > -floor_div(-length, page);
}

/*
 * For the n accesses at rows (the events' indices) with their classification (flags, as
 * sequence.c sets them, and gap: offset less where the previous access its way ended), add
 * to each sum at the access's code: its count, bytes, timed calls and their ns, the
 * straddling requests, the interleaved and resuming ones, and for forward reads the bytes
 * skipped and, at code * BITS + the gap's bit length, how many skipped that much (and in
 * stream_gap_log2 the same of those IN_STREAM: the read before them skipped little).
 * copy_orig[orig] marks the in-kernel copies among the original calls.  Where codes is not
 * NULL, each access's code is also written at its row (codes[rows[k]]; every code fits in
 * 16 bits: 3 classes x 3 orders x BITS).
 */
void fsbm_data_classes(int64_t n, const int64_t *rows, const uint8_t *flags, const int64_t *gap, const int8_t *op,
		       int8_t op_read, const int32_t *orig, const uint8_t *copy_orig, const int64_t *offset,
		       const int64_t *size, const int64_t *ret, const int64_t *dur, int64_t page, int64_t *count,
		       int64_t *bytes, int64_t *timed, int64_t *timed_ns, int64_t *straddled, int64_t *interleaved_sum,
		       int64_t *resumes_sum, int64_t *gap_bytes, int64_t *gap_log2, int64_t *stream_gap_log2,
		       int16_t *codes)
{
	for (int64_t k = 0; k < n; k++) {
		int64_t i = rows[k];
		int64_t length = access_length(size[i], ret[i]);
		int copy = copy_orig[orig[i]] != 0;
		int is_read = op[i] == op_read && !copy;
		int in_order = (flags[k] & CONSECUTIVE) || copy;
		int forward = is_read && (flags[k] & SEQUENTIAL) && !in_order;
		int name = copy ? COPY : is_read ? READ : WRITE;
		int order = in_order ? ORDER_SEQUENTIAL : forward ? ORDER_FORWARD : ORDER_RANDOM;
		int64_t code = ((int64_t)name * 3 + order) * BITS + bit_length(length);

		if (codes)
			codes[i] = (int16_t)code;
		count[code]++;
		bytes[code] += length;
		if (dur[i] != MISSING) {
			timed[code]++;
			timed_ns[code] += dur[i] > 0 ? dur[i] : 0;
		}
		straddled[code] += !copy && straddles(offset[i], length, page);
		interleaved_sum[code] += (flags[k] & INTERLEAVED) != 0;
		resumes_sum[code] += (flags[k] & RESUMES) != 0;
		if (forward) {
			gap_bytes[code] += gap[k];
			gap_log2[code * BITS + bit_length(gap[k])]++;
			if (flags[k] & IN_STREAM)
				stream_gap_log2[code * BITS + bit_length(gap[k])]++;
		}
	}
}
