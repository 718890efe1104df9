/*
 * clock.h - the one clock every fsbench measurement reads, and its own cost.
 */
#ifndef FSBENCH_CLOCK_H
#define FSBENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds; a vDSO call on Linux, so it does not enter the kernel. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The median cost of one back-to-back pair of clock reads, in ns.  Each sample has it
 * subtracted, so a measured operation is the operation alone (DESIGN: timer overhead
 * measured and subtracted).
 */
uint64_t timer_overhead_ns(void);

#endif
