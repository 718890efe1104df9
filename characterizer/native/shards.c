/*
 * shards.c - the spatial hashes of block keys that choose a SHARDS sample (reuse.py): a
 * block is in a sample when its hash falls under a threshold, so every reference to it is
 * in, or none.  splitmix64's finalizer mixes each key, and mixes it again with each seed,
 * so two seeds give unrelated samples (mix.h), in one pass instead of a dozen numpy passes
 * over the keys.
 */
#include <stdint.h>

#include "mix.h"

/* hashes[s * n + i] = spatial_hash(keys[i], seeds[s]) for each of the nseeds seeds. */
void fsbm_spatial_hashes(const uint64_t *keys, int64_t n, const uint64_t *seeds, int64_t nseeds, uint64_t *hashes)
{
	for (int64_t i = 0; i < n; i++)
		for (int64_t s = 0; s < nseeds; s++)
			hashes[s * n + i] = spatial_hash((uint64_t)keys[i], seeds[s]);
}
