/*
 * blocks.c - the 4 KiB blocks that data accesses touch, in trace order (reuse.py's
 * _blocks): a run of the accesses' block positions expanded into each block's access, its
 * rank within the access and its key, in one pass where numpy took a binary search per
 * block and four more passes over the run; or, for a SHARDS sample, only the blocks each
 * seed keeps, hashed as they are made, so the blocks left out are never written.
 */
#include <stdint.h>

#include "mix.h"

/* The first access that ends after block `start`: ends[a] is the position after access
 * a's last block. */
static int64_t access_at(const int64_t *ends, int64_t n_access, int64_t start)
{
	int64_t lo = 0, hi = n_access;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (ends[mid] > start)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Blocks start .. start + count - 1 of the accesses' blocks, where ends[a] is the position
 * after access a's last block (every access spans one block or more): for each, its access
 * a, its place (its rank within the access) and its key, files[a] << file_shift |
 * (first[a] + place), first[a] being the access's first block.
 *
 * With no seeds every block is written, at [0, count).  With seeds, a block is written for
 * each seed whose sample holds it (its spatial hash under seeds[s] is below `threshold`),
 * at [s * count, s * count + kept[s]), in order.
 */
void fsbm_blocks(const int64_t *ends, const int64_t *first, const int64_t *files, int64_t n_access,
		 int64_t file_shift, int64_t start, int64_t count, const uint64_t *seeds, int64_t nseeds,
		 uint64_t threshold, int64_t *access, int64_t *place, int64_t *key, int64_t *kept)
{
	int64_t a = access_at(ends, n_access, start), p = start - (a ? ends[a - 1] : 0);
	int64_t samples = nseeds > 0 ? nseeds : 1;

	for (int64_t s = 0; s < samples; s++)
		kept[s] = 0;
	for (int64_t k = 0; k < count; k++) {
		int64_t block = (int64_t)((uint64_t)files[a] << file_shift) | (first[a] + p);

		for (int64_t s = 0; s < samples; s++) {
			if (nseeds > 0 && spatial_hash((uint64_t)block, seeds[s]) >= threshold)
				continue;
			int64_t at = s * count + kept[s]++;

			access[at] = a;
			place[at] = p;
			key[at] = block;
		}
		if (start + k + 1 == ends[a]) {
			a++;
			p = 0;
		} else {
			p++;
		}
	}
}
