/*
 * latency.h - the one latency distribution type: every timed sample is kept, so
 * percentiles are exact, and two histograms are derived for display and storage: log2
 * buckets (coarse, for bimodality), and log-linear ones fine enough to draw a distribution
 * from (HdrHistogram's layout, as fio's latency buckets are).
 */
#ifndef FSBENCH_LATENCY_H
#define FSBENCH_LATENCY_H

#include <stddef.h>
#include <stdint.h>

enum { LOG2_BUCKETS = 64 };
/* Log-linear: values below SUB_BUCKETS ns exactly, then SUB_BUCKETS buckets of equal width in
 * each power of two, so a bucket is never wider than 1/SUB_BUCKETS of its lower bound. */
enum { SUB_BUCKETS = 16, SUB_BITS = 4, LOGLIN_BUCKETS = SUB_BUCKETS * (64 - SUB_BITS + 1) };

struct latency {
	uint64_t *ns;
	size_t n, cap;
};

struct latency_summary {
	size_t n;
	double mean;
	uint64_t min, max, p50, p90, p99, p999;
	/* bucket k counts samples in [2^k, 2^(k+1)) ns; bucket 0 also holds 0 ns. */
	uint64_t log2_hist[LOG2_BUCKETS];
	uint64_t loglin_hist[LOGLIN_BUCKETS];
	/* Two separated peaks in the log2 histogram (DESIGN: flag bimodal results). */
	int bimodal;
	int peak_buckets[2];
};

void latency_init(struct latency *l);
void latency_free(struct latency *l);
void latency_add(struct latency *l, uint64_t ns);
void latency_clear(struct latency *l);
/* Sorts l->ns in place; fills the summary.  An empty distribution gives n == 0. */
void latency_summarize(struct latency *l, struct latency_summary *s);

struct json;
/* The summary's non-empty buckets as "histogram_log2" and "histogram" (log-linear):
 * [{lo_ns, hi_ns, count}], each bucket holding lo_ns <= ns < hi_ns. */
void latency_write_histogram(struct json *j, const struct latency_summary *s);
/* The log-linear bucket a value falls in, and a bucket's bounds [lo, hi). */
int loglin_bucket(uint64_t ns);
void loglin_bounds(int bucket, uint64_t *lo, uint64_t *hi);

/* Mean, 95% interval (Student t) and relative standard deviation of repetition means. */
struct rep_stats {
	size_t reps;
	double mean, ci_low, ci_high, rsd;
};
void rep_stats_compute(const double *values, size_t n, struct rep_stats *out);

/*
 * A forward stream's reads by the gap before each: the mean latency of the reads that
 * followed a gap of each power of two (bucket 0: no gap, k: [2^(k-1), 2^k) bytes).  A
 * stream's cost is not its mean gap's: readahead hits the reads a short gap leaves inside
 * its window and misses the rest, so the predictor prices a program's own mix of gaps.
 */
enum { GAP_BUCKETS = 65 };
struct gap_latency {
	uint64_t count[GAP_BUCKETS];
	double sum_ns[GAP_BUCKETS];
};
void gap_latency_add(struct gap_latency *g, uint64_t gap, uint64_t ns);
/* The non-empty buckets as "gap_costs": [{gap (its lowest byte count), count, mean_ns}]. */
void gap_latency_write(struct json *j, const struct gap_latency *g);

#endif
