/*
 * significant.c - counts of values rounded down to their most significant bits
 * (histograms.py: significant), without a sort: each value is coded as (shift, top bits),
 * codes whose order is the rounded values' order, and counted in a table of 64 << bits.
 */
#include <stdint.h>

/*
 * counts[code] += 1 for each value >= 0, where a value below 2^bits is its own code and a
 * larger one, of bit length L, is (L - bits) << bits | value >> (L - bits).  Returns how
 * many values were negative (not counted: they stay as they are, and the caller counts them).
 */
int64_t fsbm_significant_counts(const int64_t *values, int64_t n, int bits, int64_t *counts)
{
	int64_t negative = 0;

	for (int64_t i = 0; i < n; i++) {
		int64_t v = values[i];

		if (v < 0) {
			negative++;
			continue;
		}
		int length = v ? 64 - __builtin_clzll((uint64_t)v) : 0;
		int shift = length > bits ? length - bits : 0;

		counts[((int64_t)shift << bits) | (v >> shift)]++;
	}
	return negative;
}
