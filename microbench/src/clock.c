/*
 * clock.c - measure what reading the clocks costs.
 */
#include "clock.h"

#include <stdlib.h>

/*
 * Samples behind each median: the CPU clock's bracket costs some 0.4 us, so 20,001 take 16 ms
 * here, where 200,001 took 170 ms of every fsbench run and every --cpu-per-op replay; the
 * medians of the two agreed to the nanosecond over five runs.
 */
enum { OVERHEAD_SAMPLES = 20001 };

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of OVERHEAD_SAMPLES calls of `sample`. */
static uint64_t median_sample(uint64_t (*sample)(void))
{
	uint64_t *deltas = malloc(sizeof(*deltas) * OVERHEAD_SAMPLES);
	uint64_t median;

	if (!deltas)
		return 0;
	for (size_t i = 0; i < OVERHEAD_SAMPLES; i++)
		deltas[i] = sample();
	qsort(deltas, OVERHEAD_SAMPLES, sizeof(*deltas), compare_u64);
	median = deltas[OVERHEAD_SAMPLES / 2];
	free(deltas);
	return median;
}

/* The same shape as a timed operation with nothing inside: t0, (nothing), t1. */
static uint64_t empty_timing(void)
{
	uint64_t t0 = now_ns();
	uint64_t t1 = now_ns();

	return t1 - t0;
}

/* The same shape as runner.c's bracket around an untimed callback, with nothing inside. */
static uint64_t empty_cpu_bracket(void)
{
	uint64_t c0 = thread_cpu_ns();
	uint64_t c1 = thread_cpu_ns();

	return c1 - c0;
}

uint64_t timer_overhead_ns(void)
{
	return median_sample(empty_timing);
}

uint64_t cpu_overhead_ns(void)
{
	return median_sample(empty_cpu_bracket);
}
