/*
 * latency.c - samples counted in fine buckets, their percentiles, log2 and log-linear
 * histograms, bimodality and repetition statistics.
 */
#include "latency.h"

#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void latency_init(struct latency *l)
{
	memset(l, 0, sizeof(*l));
}

void latency_free(struct latency *l)
{
	free(l->counts);
	latency_init(l);
}

void latency_clear(struct latency *l)
{
	if (l->counts)
		memset(l->counts, 0, FINE_BUCKETS * sizeof(*l->counts));
	l->n = 0;
	l->sum = 0;
	l->min = l->max = 0;
}

/* The fine bucket of a sample: exact below FINE_SUB, then FINE_SUB a power of two. */
static size_t fine_bucket(uint64_t ns)
{
	int k;

	if (ns < FINE_SUB)
		return (size_t)ns;
	k = 63 - __builtin_clzll(ns);	/* ns in [2^k, 2^(k+1)), k >= FINE_BITS */
	if (k >= FINE_TOP)
		return FINE_BUCKETS - 1;
	return (size_t)FINE_SUB * (size_t)(k - FINE_BITS + 1) + (size_t)((ns >> (k - FINE_BITS)) - FINE_SUB);
}

static void fine_bounds(size_t bucket, uint64_t *lo, uint64_t *hi)
{
	size_t shift = bucket / FINE_SUB, sub = bucket % FINE_SUB;

	if (shift == 0) {
		*lo = bucket;
		*hi = bucket + 1;
		return;
	}
	*lo = (uint64_t)(FINE_SUB + sub) << (shift - 1);
	*hi = (uint64_t)(FINE_SUB + sub + 1) << (shift - 1);
}

static void count_samples(struct latency *l, size_t bucket, uint64_t count, uint64_t min, uint64_t max)
{
	if (!l->counts)
		l->counts = xcalloc(FINE_BUCKETS, sizeof(*l->counts));
	l->counts[bucket] += count;
	if (l->n == 0 || min < l->min)
		l->min = min;
	if (l->n == 0 || max > l->max)
		l->max = max;
	l->n += count;
}

void latency_add(struct latency *l, uint64_t ns)
{
	count_samples(l, fine_bucket(ns), 1, ns, ns);
	l->sum += (double)ns;
}

void latency_merge(struct latency *into, const struct latency *from)
{
	if (from->n == 0)
		return;
	for (size_t b = 0; b < FINE_BUCKETS; b++)
		if (from->counts[b])
			count_samples(into, b, from->counts[b], from->min, from->max);
	into->sum += from->sum;
}

static int log2_bucket(uint64_t ns)
{
	int k = 0;

	while (ns > 1 && k < LOG2_BUCKETS - 1) {
		ns >>= 1;
		k++;
	}
	return k;
}

int loglin_bucket(uint64_t ns)
{
	int k;

	if (ns < SUB_BUCKETS)
		return (int)ns;
	k = 63 - __builtin_clzll(ns);	/* ns in [2^k, 2^(k+1)), k >= SUB_BITS */
	return SUB_BUCKETS * (k - SUB_BITS + 1) + (int)((ns >> (k - SUB_BITS)) - SUB_BUCKETS);
}

void loglin_bounds(int bucket, uint64_t *lo, uint64_t *hi)
{
	int shift, sub;

	if (bucket < SUB_BUCKETS) {
		*lo = (uint64_t)bucket;
		*hi = *lo + 1;
		return;
	}
	shift = bucket / SUB_BUCKETS - 1;
	sub = bucket % SUB_BUCKETS;
	*lo = (uint64_t)(SUB_BUCKETS + sub) << shift;
	/* The last bucket of the top power of two ends past 2^64 - 1. */
	*hi = shift == 64 - SUB_BITS - 1 && sub == SUB_BUCKETS - 1 ? UINT64_MAX
	      : (uint64_t)(SUB_BUCKETS + sub + 1) << shift;
}

/*
 * A histogram is called bimodal when it has two local maxima, each holding at least 10%
 * of the samples, with a valley between them at most half the smaller peak.  On a log2
 * scale this catches the classic cache-hit / cache-miss split (e.g. 2 us vs 200 us).
 */
static void find_bimodality(struct latency_summary *s)
{
	uint64_t floor = s->n / 10;
	int peaks[LOG2_BUCKETS], npeaks = 0;

	for (int k = 0; k < LOG2_BUCKETS; k++) {
		uint64_t left = k > 0 ? s->log2_hist[k - 1] : 0;
		uint64_t right = k < LOG2_BUCKETS - 1 ? s->log2_hist[k + 1] : 0;
		uint64_t c = s->log2_hist[k];

		if (c >= floor && c > 0 && c >= left && c > right)
			peaks[npeaks++] = k;
	}
	for (int a = 0; a < npeaks; a++) {
		for (int b = a + 1; b < npeaks; b++) {
			uint64_t smaller = s->log2_hist[peaks[a]] < s->log2_hist[peaks[b]] ?
				s->log2_hist[peaks[a]] : s->log2_hist[peaks[b]];
			uint64_t valley = smaller;

			for (int k = peaks[a] + 1; k < peaks[b]; k++)
				if (s->log2_hist[k] < valley)
					valley = s->log2_hist[k];
			if (peaks[b] - peaks[a] >= 2 && valley * 2 <= smaller) {
				s->bimodal = 1;
				s->peak_buckets[0] = peaks[a];
				s->peak_buckets[1] = peaks[b];
				return;
			}
		}
	}
}

/* The middle of the fine bucket that holds each of `nranks` nearest ranks (ascending),
 * within [min, max]: the samples are counted, not kept.  The first and last ranks are the
 * min and max, kept exactly. */
static void percentiles(const struct latency *l, const size_t *ranks, uint64_t *out, size_t nranks)
{
	uint64_t seen = 0;
	size_t r = 0;

	for (size_t b = 0; b < FINE_BUCKETS && r < nranks; b++) {
		uint64_t lo, hi, mid;

		seen += l->counts[b];
		if (seen < ranks[r])
			continue;
		fine_bounds(b, &lo, &hi);
		mid = lo + (hi - lo) / 2;
		mid = mid < l->min ? l->min : mid > l->max ? l->max : mid;
		for (; r < nranks && seen >= ranks[r]; r++)
			out[r] = ranks[r] == 1 ? l->min : ranks[r] == l->n ? l->max : mid;
	}
}

/* Nearest rank, the definition fio's clat percentiles use. */
static size_t nearest_rank(size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);

	return rank < 1 ? 1 : rank > n ? n : rank;
}

void latency_summarize(const struct latency *l, struct latency_summary *s)
{
	size_t ranks[4];
	uint64_t at[4];

	memset(s, 0, sizeof(*s));
	s->n = l->n;
	if (l->n == 0)
		return;
	for (size_t b = 0; b < FINE_BUCKETS; b++) {
		uint64_t lo, hi;

		if (!l->counts[b])
			continue;
		/* A fine bucket lies inside one bucket of either coarser histogram. */
		fine_bounds(b, &lo, &hi);
		s->log2_hist[log2_bucket(lo)] += l->counts[b];
		s->loglin_hist[loglin_bucket(lo)] += l->counts[b];
	}
	s->mean = l->sum / (double)l->n;
	s->min = l->min;
	s->max = l->max;
	ranks[0] = nearest_rank(l->n, 50);
	ranks[1] = nearest_rank(l->n, 90);
	ranks[2] = nearest_rank(l->n, 99);
	ranks[3] = nearest_rank(l->n, 99.9);
	percentiles(l, ranks, at, 4);
	s->p50 = at[0];
	s->p90 = at[1];
	s->p99 = at[2];
	s->p999 = at[3];
	find_bimodality(s);
}

/* Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom; 1.96 beyond. */
static double t_quantile_975(size_t df)
{
	static const double table[] = {
		12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};

	if (df >= 1 && df <= sizeof(table) / sizeof(table[0]))
		return table[df - 1];
	return 1.96;
}

void rep_stats_compute(const double *values, size_t n, struct rep_stats *out)
{
	double sum = 0, ss = 0, sd, half;

	memset(out, 0, sizeof(*out));
	out->reps = n;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		sum += values[i];
	out->mean = sum / (double)n;
	if (n < 2) {
		out->ci_low = out->ci_high = out->mean;
		return;
	}
	for (size_t i = 0; i < n; i++)
		ss += (values[i] - out->mean) * (values[i] - out->mean);
	sd = sqrt(ss / (double)(n - 1));
	half = t_quantile_975(n - 1) * sd / sqrt((double)n);
	out->ci_low = out->mean - half;
	out->ci_high = out->mean + half;
	out->rsd = out->mean > 0 ? sd / out->mean : 0;
}

void latency_write_histogram(struct json *j, const struct latency_summary *s)
{
	json_key(j, "histogram_log2");
	json_begin_array(j);
	for (int k = 0; k < LOG2_BUCKETS; k++) {
		if (!s->log2_hist[k])
			continue;
		json_begin_object(j);
		json_kv_u64(j, "lo_ns", k == 0 ? 0 : 1ULL << k);
		json_kv_u64(j, "hi_ns", 1ULL << (k + 1));
		json_kv_u64(j, "count", s->log2_hist[k]);
		json_end_object(j);
	}
	json_end_array(j);
	json_key(j, "histogram");
	json_begin_array(j);
	for (int b = 0; b < LOGLIN_BUCKETS; b++) {
		uint64_t lo, hi;

		if (!s->loglin_hist[b])
			continue;
		loglin_bounds(b, &lo, &hi);
		json_begin_object(j);
		json_kv_u64(j, "lo_ns", lo);
		json_kv_u64(j, "hi_ns", hi);
		json_kv_u64(j, "count", s->loglin_hist[b]);
		json_end_object(j);
	}
	json_end_array(j);
}

void gap_latency_add(struct gap_latency *g, uint64_t gap, uint64_t ns)
{
	int k = gap == 0 ? 0 : log2_bucket(gap) + 1;

	g->count[k]++;
	g->sum_ns[k] += (double)ns;
}

void gap_latency_write(struct json *j, const struct gap_latency *g)
{
	json_key(j, "gap_costs");
	json_begin_array(j);
	for (int k = 0; k < GAP_BUCKETS; k++) {
		if (!g->count[k])
			continue;
		json_begin_object(j);
		json_kv_u64(j, "gap", k == 0 ? 0 : 1ULL << (k - 1));
		json_kv_u64(j, "count", g->count[k]);
		json_kv_double(j, "mean_ns", g->sum_ns[k] / (double)g->count[k]);
		json_end_object(j);
	}
	json_end_array(j);
}
