/*
 * blocks.c - the 4 KiB blocks that data accesses touch, in trace order (reuse.py's
 * _blocks): the accesses walked block by block, a chunk at a time, each block written
 * with its access, its rank within the access and its key; or, for a SHARDS sample, only
 * the blocks each seed keeps, hashed as they are made, so the blocks left out are never
 * written.  Offsets are not negative (an access at a negative offset fails).
 */
#include <stdint.h>

#include "events.h"
#include "mix.h"

/* The blocks an access of `length` bytes (> 0) at `offset` touches. */
static int64_t blocks_of(int64_t offset, int64_t length, int64_t block)
{
	return (offset + length - 1) / block - offset / block + 1;
}

/* total[0] = the block references of the n accesses, total[1] = those of the reads. */
void fsbm_block_totals(int64_t n, const int64_t *offset, const int64_t *length, const uint8_t *is_read,
		       int64_t block, int64_t *total)
{
	total[0] = total[1] = 0;
	for (int64_t i = 0; i < n; i++) {
		int64_t blocks = blocks_of(offset[i], length[i], block);

		total[0] += blocks;
		if (is_read[i])
			total[1] += blocks;
	}
}

/*
 * The next `count` blocks (or fewer, where the accesses end) of the n accesses, from
 * cursor[0]'s block cursor[1] on; the cursor is moved past them and the blocks walked are
 * returned.  For each block: its access a, its place (its rank within the access) and its
 * key, files[a] << file_shift | its block number in the file.
 *
 * With no seeds every block is written, at [0, count).  With seeds, a block is written for
 * each seed whose sample holds it (its spatial hash under seeds[s] is below `threshold`),
 * at [s * count, s * count + kept[s]), in order.
 */
int64_t fsbm_blocks(int64_t n, const int64_t *files, const int64_t *offset, const int64_t *length, int64_t block,
		    int64_t file_shift, int64_t *cursor, int64_t count, const uint64_t *seeds, int64_t nseeds,
		    uint64_t threshold, int64_t *access, int64_t *place, int64_t *key, int64_t *kept)
{
	int64_t a = cursor[0], p = cursor[1], k = 0;
	int64_t samples = nseeds > 0 ? nseeds : 1;

	for (int64_t s = 0; s < samples; s++)
		kept[s] = 0;
	while (k < count && a < n) {
		int64_t first = offset[a] / block, blocks = blocks_of(offset[a], length[a], block);
		int64_t file_bits = (int64_t)((uint64_t)files[a] << file_shift);

		for (; p < blocks && k < count; p++, k++) {
			int64_t b = file_bits | (first + p);

			for (int64_t s = 0; s < samples; s++) {
				if (nseeds > 0 && spatial_hash((uint64_t)b, seeds[s]) >= threshold)
					continue;
				int64_t at = s * count + kept[s]++;

				access[at] = a;
				place[at] = p;
				key[at] = b;
			}
		}
		if (p == blocks) {
			a++;
			p = 0;
		}
	}
	cursor[0] = a;
	cursor[1] = p;
	return k;
}

/*
 * The events that reference blocks: reads and writes at an offset (not a negative one: such
 * a call fails) that moved bytes, ret where the call says, else the bytes asked.  For each,
 * in order: rows[k] its index, length[k] its bytes, is_read[k].  Returns how many.
 */
int64_t fsbm_data_accesses(int64_t n, const int8_t *op, int8_t op_read, int8_t op_write, const int64_t *offset,
			   const int64_t *size, const int64_t *ret, int64_t *rows, int64_t *length, uint8_t *is_read)
{
	int64_t k = 0;

	for (int64_t i = 0; i < n; i++) {
		if ((op[i] != op_read && op[i] != op_write) || offset[i] < 0)
			continue;
		int64_t moved = access_length(size[i], ret[i]);

		if (moved <= 0)
			continue;
		rows[k] = i;
		length[k] = moved;
		is_read[k] = op[i] == op_read;
		k++;
	}
	return k;
}
