/* mix.h - splitmix64's finalizer: every bit of the result depends on every bit of z. */
#ifndef FSBM_MIX_H
#define FSBM_MIX_H

#include <stdint.h>

static inline uint64_t mix(uint64_t z)
{
	z += 0x9E3779B97F4A7C15u;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

/* A block key's hash under a seed (a SHARDS sample keeps the blocks whose hash is below a
 * threshold): the key is mixed before the seed enters, so two seeds' samples are unrelated. */
static inline uint64_t spatial_hash(uint64_t key, uint64_t seed)
{
	return mix(mix(key) ^ seed);
}

#endif
