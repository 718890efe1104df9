/*
 * clock.h - the clocks every fsbench measurement reads, and their own cost.
 */
#ifndef FSBENCH_CLOCK_H
#define FSBENCH_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds; a vDSO call on Linux, so it does not enter the kernel. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The calling thread's CPU time, user and system, in nanoseconds: what an operation took
 * of the processor, apart from its waits for the device.  A program's time outside the
 * filesystem is its CPU time less this share of its calls', so fsbench measures both.
 * Not in the vDSO: it is read outside the latency's window.
 */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A getrusage time in nanoseconds. */
static inline uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL + (uint64_t)tv->tv_usec * 1000ULL;
}

/*
 * The median cost of one back-to-back pair of clock reads, in ns.  Each sample has it
 * subtracted, so a measured operation is the operation alone (DESIGN: timer overhead
 * measured and subtracted).
 */
uint64_t timer_overhead_ns(void);

/* The median CPU time between two back-to-back reads of the thread CPU clock, in ns: about
 * what a bracket around an untimed callback leaves uncounted (runner.c). */
uint64_t cpu_overhead_ns(void);

/* What the clocks cost, measured once a run and subtracted from every sample. */
struct clock_costs {
	uint64_t timer_ns;  /* timer_overhead_ns() */
	uint64_t cpu_ns;    /* cpu_overhead_ns() */
};

#endif
