/*
 * latency.h - the one latency distribution type.  Every timed sample is counted in fine
 * log-linear buckets (HdrHistogram's layout, as fio's latency buckets are): exact below
 * FINE_SUB ns, and FINE_SUB buckets in each power of two above, so a percentile read from
 * them is within 1/(2 FINE_SUB) (0.2%) of the sample it stands for, while count, sum, min
 * and max are exact.  A distribution's memory is fixed however many samples it counts, so
 * a case measured in several rounds keeps its distribution between them, and two
 * distributions merge by adding their counts.  Two coarser histograms are derived for
 * display and storage: log2 buckets (for bimodality), and log-linear ones of SUB_BUCKETS a
 * power of two, fine enough to draw a distribution from.
 */
#ifndef FSBENCH_LATENCY_H
#define FSBENCH_LATENCY_H

#include <stddef.h>
#include <stdint.h>

enum { LOG2_BUCKETS = 64 };
/* Log-linear: values below SUB_BUCKETS ns exactly, then SUB_BUCKETS buckets of equal width in
 * each power of two, so a bucket is never wider than 1/SUB_BUCKETS of its lower bound. */
enum { SUB_BUCKETS = 16, SUB_BITS = 4, LOGLIN_BUCKETS = SUB_BUCKETS * (64 - SUB_BITS + 1) };

/* The fine buckets: FINE_SUB a power of two up to 2^FINE_TOP ns (73 minutes); a longer
 * sample is counted in the last bucket (its max stays exact). */
enum { FINE_BITS = 8, FINE_SUB = 1 << FINE_BITS, FINE_TOP = 42,
       FINE_BUCKETS = FINE_SUB * (FINE_TOP - FINE_BITS + 1) };

struct latency {
	uint64_t *counts;  /* FINE_BUCKETS of them, allocated with the first sample */
	size_t n;
	double sum;
	uint64_t min, max;
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
/* Adds every sample of `from` to `into`. */
void latency_merge(struct latency *into, const struct latency *from);
/* Fills the summary: percentiles by nearest rank (fio's definition), each the middle of the
 * fine bucket its rank falls in, within [min, max].  An empty distribution gives n == 0. */
void latency_summarize(const struct latency *l, struct latency_summary *s);

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
