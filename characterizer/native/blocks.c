/*
 * blocks.c - the 4 KiB blocks that data accesses touch, in trace order (reuse.py's
 * _blocks): a run of the accesses' block positions expanded into each block's access, its
 * rank within the access and its key, in one pass where numpy took a binary search per
 * block and four more passes over the run.
 */
#include <stdint.h>

/*
 * Blocks start .. start + count - 1 of the accesses' blocks, where ends[a] is the position
 * after access a's last block (every access spans one block or more): access[k], place[k]
 * (the block's rank within its access) and key[k] = files[a] << file_shift | (first[a] +
 * place[k]), first[a] being the access's first block.
 */
void fsbm_expand_blocks(const int64_t *ends, const int64_t *first, const int64_t *files, int64_t n_access,
			int64_t file_shift, int64_t start, int64_t count, int64_t *access, int64_t *place, int64_t *key)
{
	int64_t lo = 0, hi = n_access;

	while (lo < hi) { /* the first access that ends after `start` */
		int64_t mid = lo + (hi - lo) / 2;

		if (ends[mid] > start)
			hi = mid;
		else
			lo = mid + 1;
	}
	int64_t a = lo, p = start - (a ? ends[a - 1] : 0);

	for (int64_t k = 0; k < count; k++) {
		access[k] = a;
		place[k] = p;
		key[k] = (int64_t)((uint64_t)files[a] << file_shift) | (first[a] + p);
		if (start + k + 1 == ends[a]) {
			a++;
			p = 0;
		} else {
			p++;
		}
	}
}
