/*
 * clock.c - measure what reading the clock costs.
 */
#include "clock.h"

#include <stdlib.h>

enum { OVERHEAD_SAMPLES = 200001 };

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t timer_overhead_ns(void)
{
	uint64_t *deltas = malloc(sizeof(*deltas) * OVERHEAD_SAMPLES);
	uint64_t median;

	if (!deltas)
		return 0;
	/* The same shape as a timed operation with nothing inside: t0, (nothing), t1. */
	for (size_t i = 0; i < OVERHEAD_SAMPLES; i++) {
		uint64_t t0 = now_ns();
		uint64_t t1 = now_ns();

		deltas[i] = t1 - t0;
	}
	qsort(deltas, OVERHEAD_SAMPLES, sizeof(*deltas), compare_u64);
	median = deltas[OVERHEAD_SAMPLES / 2];
	free(deltas);
	return median;
}
