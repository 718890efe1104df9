/*
 * test_units.c - unit tests for the pieces of fsbench with exact answers: percentiles,
 * histograms, bimodality, repetition statistics, size parsing, Tang App. C paths,
 * permutations, data offsets across warm passes and the JSON writer.  Prints "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "json.h"
#include "latency.h"
#include "tree.h"
#include "util.h"

static int passed, failed;

static void check(int ok, const char *name)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL %s\n", name);
	}
}

/* Whether a percentile read from the fine buckets is within 1/(2 FINE_SUB) of the sample. */
static int near(uint64_t got, uint64_t want)
{
	return fabs((double)got - (double)want) <= (double)want / (2.0 * FINE_SUB);
}

static void test_percentiles_are_nearest_rank(void)
{
	struct latency l;
	struct latency_summary s;

	latency_init(&l);
	for (uint64_t v = 100; v >= 1; v--)
		latency_add(&l, v * 1000);
	latency_summarize(&l, &s);
	check(s.n == 100, "percentiles: count");
	check(near(s.p50, 50000) && near(s.p90, 90000) && near(s.p99, 99000) && s.p999 == 100000,
	      "percentiles: nearest rank, within 1/512 of the sample");
	check(s.min == 1000 && s.max == 100000, "percentiles: min and max exact");
	check(fabs(s.mean - 50500.0) < 1e-9, "percentiles: mean exact");
	latency_free(&l);
}

static void test_small_samples_are_exact(void)
{
	struct latency l;
	struct latency_summary s;

	latency_init(&l);
	for (uint64_t v = 1; v <= 200; v++)
		latency_add(&l, v);
	latency_summarize(&l, &s);
	check(s.p50 == 100 && s.p90 == 180 && s.p99 == 198, "percentiles: exact below FINE_SUB ns");
	latency_free(&l);
}

static void test_merged_distributions_add_up(void)
{
	struct latency a, b, both;
	struct latency_summary sa, sboth;

	latency_init(&a);
	latency_init(&b);
	latency_init(&both);
	for (uint64_t v = 1; v <= 1000; v++) {
		latency_add(v % 3 ? &a : &b, v * 997);
		latency_add(&both, v * 997);
	}
	latency_merge(&a, &b);
	latency_summarize(&a, &sa);
	latency_summarize(&both, &sboth);
	check(sa.n == 1000 && sa.min == sboth.min && sa.max == sboth.max && fabs(sa.mean - sboth.mean) < 1e-6 &&
	      sa.p50 == sboth.p50 && sa.p99 == sboth.p99 && memcmp(sa.loglin_hist, sboth.loglin_hist,
								  sizeof(sa.loglin_hist)) == 0,
	      "merge: two distributions merged are the one of all their samples");
	latency_clear(&a);
	latency_summarize(&a, &sa);
	check(sa.n == 0, "merge: a cleared distribution is empty");
	latency_free(&a);
	latency_free(&b);
	latency_free(&both);
}

static void test_log2_histogram_buckets(void)
{
	struct latency l;
	struct latency_summary s;

	latency_init(&l);
	latency_add(&l, 0);
	latency_add(&l, 1);
	latency_add(&l, 1023);
	latency_add(&l, 1024);
	latency_add(&l, 2047);
	latency_summarize(&l, &s);
	check(s.log2_hist[0] == 2, "histogram: 0 and 1 ns in bucket 0");
	check(s.log2_hist[9] == 1, "histogram: 1023 ns in [512, 1024)");
	check(s.log2_hist[10] == 2, "histogram: 1024 and 2047 ns in [1024, 2048)");
	latency_free(&l);
}

static void test_loglin_buckets_tile_the_line_finely(void)
{
	uint64_t lo, hi, prev_hi = 0;
	int ok = 1;

	for (int b = 0; b < LOGLIN_BUCKETS - 1; b++) {
		loglin_bounds(b, &lo, &hi);
		if (lo != prev_hi || hi <= lo || (lo >= SUB_BUCKETS && (hi - lo) * SUB_BUCKETS > lo) ||
		    loglin_bucket(lo) != b || loglin_bucket(hi - 1) != b)
			ok = 0;
		prev_hi = hi;
	}
	check(ok, "log-linear: buckets adjoin, each within 1/16 of its bound, and hold their bounds");
	loglin_bounds(loglin_bucket(1023), &lo, &hi);
	check(lo == 992 && hi == 1024, "log-linear: 1023 ns in [992, 1024)");
	loglin_bounds(loglin_bucket(1024), &lo, &hi);
	check(lo == 1024 && hi == 1088, "log-linear: 1024 ns in [1024, 1088)");
	check(loglin_bucket(UINT64_MAX) == LOGLIN_BUCKETS - 1, "log-linear: the largest value has a bucket");
	loglin_bounds(LOGLIN_BUCKETS - 1, &lo, &hi);
	check(hi == UINT64_MAX && lo < hi, "log-linear: the last bucket ends at the largest value");
}

static void test_bimodal_split_is_flagged(void)
{
	struct latency l;
	struct latency_summary s;

	latency_init(&l);
	for (int i = 0; i < 500; i++)
		latency_add(&l, 2100 + (uint64_t)i);      /* cache hits near 2 us: [2048, 4096) */
	for (int i = 0; i < 400; i++)
		latency_add(&l, 200000 + (uint64_t)i);    /* misses near 200 us */
	latency_summarize(&l, &s);
	check(s.bimodal == 1, "bimodal: hit/miss split flagged");
	check(s.peak_buckets[0] == 11 && s.peak_buckets[1] == 17, "bimodal: peaks located");
	latency_free(&l);
}

static void test_unimodal_is_not_flagged(void)
{
	struct latency l;
	struct latency_summary s;
	struct rng r;

	rng_seed(&r, 7);
	latency_init(&l);
	for (int i = 0; i < 1000; i++)
		latency_add(&l, 4000 + rng_next(&r) % 3000);
	latency_summarize(&l, &s);
	check(s.bimodal == 0, "bimodal: one peak is not flagged");
	latency_free(&l);
}

static void test_rep_stats_interval(void)
{
	const double v[] = { 10, 12, 14 };
	struct rep_stats st;

	rep_stats_compute(v, 3, &st);
	/* mean 12, sd 2, t(0.975, 2) = 4.303, half width = 4.303 * 2 / sqrt(3) */
	check(fabs(st.mean - 12) < 1e-9, "rep stats: mean");
	check(fabs(st.ci_high - (12 + 4.303 * 2 / sqrt(3))) < 1e-6, "rep stats: 95% interval");
	check(fabs(st.rsd - 2.0 / 12.0) < 1e-9, "rep stats: RSD");
}

static void test_parse_size(void)
{
	uint64_t v = 0;

	check(parse_size("4096", &v) == 0 && v == 4096, "size: plain bytes");
	check(parse_size("4k", &v) == 0 && v == 4096, "size: k");
	check(parse_size("64KiB", &v) == 0 && v == 65536, "size: KiB");
	check(parse_size("1M", &v) == 0 && v == 1048576, "size: M");
	check(parse_size("2G", &v) == 0 && v == 2ULL << 30, "size: G");
	check(parse_size("0.5mem", &v) == 0 && v > 0, "size: fraction of memory");
	check(parse_size("12q", &v) != 0, "size: unknown suffix rejected");
	check(parse_size("-4k", &v) != 0, "size: negative rejected");
	check(parse_size("", &v) != 0, "size: empty rejected");
}

static void test_tree_follows_tang_appendix_c(void)
{
	struct tree t;
	char path[TREE_PATH_MAX];

	tree_init(&t, 100);
	check(t.levels == 1, "tree: 100 entries fit one directory");
	tree_leaf_path(&t, 42, "f", path, sizeof(path));
	check(strcmp(path, "f42") == 0, "tree: one-level name");
	tree_init(&t, 101);
	check(t.levels == 2, "tree: 101 entries need two levels");
	tree_init(&t, 10000);
	check(t.levels == 2, "tree: 10000 entries = ceil(log100) = 2 levels");
	tree_leaf_path(&t, 4273, "f", path, sizeof(path));
	check(strcmp(path, "i42/f73") == 0, "tree: two-level name");
	tree_init(&t, 10001);
	tree_leaf_path(&t, 10000, "d", path, sizeof(path));
	check(t.levels == 3 && strcmp(path, "i01/i00/d00") == 0, "tree: three-level name");
}

static void test_order_is_a_permutation(void)
{
	size_t perm[1000], seen[1000] = { 0 }, moved = 0;
	struct rng r;
	int ok = 1;

	rng_seed(&r, 3);
	make_order(perm, 1000, 1, &r);
	for (size_t i = 0; i < 1000; i++) {
		if (perm[i] >= 1000 || seen[perm[i]]++)
			ok = 0;
		moved += perm[i] != i;
	}
	check(ok, "order: shuffled order is a permutation");
	check(moved > 900, "order: shuffled order moves almost everything");
	make_order(perm, 1000, 0, &r);
	check(perm[0] == 0 && perm[999] == 999, "order: sequential order is the identity");
}

/* A forward stream ascends, keeps its mean gap, and a shorter window's stream is the
 * longer one's first part: filesystems with less room read the same offsets. */
static void test_forward_stream_is_prefix_stable(void)
{
	static size_t longer[4096], shorter[4096];
	struct rng r;
	size_t nl, ns, same = 0;
	int ascending = 1;

	rng_seed(&r, 11);
	nl = make_forward_stream(longer, 4096, 4096 * 17, 16.0, &r);
	rng_seed(&r, 11);
	ns = make_forward_stream(shorter, 4096, 4096 * 17 * 95 / 100, 16.0, &r);
	for (size_t i = 1; i < nl; i++)
		ascending &= longer[i] > longer[i - 1];
	for (size_t i = 0; i < ns && i < nl; i++)
		same += shorter[i] == longer[i];
	check(ascending, "forward stream: slots ascend");
	check(nl > 3800 && ns < nl && ns > nl * 9 / 10, "forward stream: as many reads as the window holds on average");
	check(same == ns && shorter[ns - 1] < 4096 * 17 * 95 / 100, "forward stream: a shorter window reads the longer's first part");
	check(fabs((double)(longer[nl - 1] - longer[0]) / (double)(nl - 1) - 17.0) < 0.6,
	      "forward stream: mean skip as asked (16 slots, 17 apart)");
	rng_seed(&r, 11);
	check(make_forward_stream(longer, 100, 1000, 0.0, &r) == 100 && longer[99] == 99,
	      "forward stream: no gap is sequential");
}

/* A read's later passes go on through the file; a rewrite's repeat their n blocks. */
static void test_data_offsets_across_passes(void)
{
	const struct bench_case seq = { .size = 4096, .order = ORDER_SEQ };
	const struct bench_case random = { .size = 4096, .order = ORDER_RANDOM };
	size_t order[10] = { 7, 2, 9, 0, 4, 1, 8, 3, 6, 5 };
	struct bench_ctx ctx = { .c = &seq, .n = 4, .norder = 10, .order = order, .stride = 4096 };

	ctx.pass = 1;
	check(data_offset(&ctx, 0) == 0 && data_offset(&ctx, 3) == 3 * 4096, "offsets: a rewrite's pass repeats");
	ctx.pass_span = 10;
	check(data_offset(&ctx, 0) == 4 * 4096 && data_offset(&ctx, 3) == 7 * 4096, "offsets: a read's pass goes on");
	ctx.pass = 2;
	check(data_offset(&ctx, 1) == 9 * 4096 && data_offset(&ctx, 2) == 0, "offsets: sequential wraps at the end");
	ctx.c = &random;
	check(data_offset(&ctx, 1) == 5 * 4096 && data_offset(&ctx, 2) == 7 * 4096, "offsets: random walks the order");
}

static void test_json_writer(void)
{
	char buf[512] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct json j;

	json_init(&j, f);
	json_begin_object(&j);
	json_kv_string(&j, "s", "a\"b\\c\n");
	json_key(&j, "a");
	json_begin_array(&j);
	json_u64(&j, 1);
	json_double(&j, 2.5);
	json_null(&j);
	json_end_array(&j);
	json_kv_bool(&j, "t", 1);
	json_kv_double(&j, "nan", NAN);
	json_end_object(&j);
	fclose(f);
	check(strcmp(buf, "{\"s\":\"a\\\"b\\\\c\\n\",\"a\":[1,2.5,null],\"t\":true,\"nan\":null}\n") == 0,
	      "json: nesting, commas, escapes, non-finite numbers");
}

int main(void)
{
	test_percentiles_are_nearest_rank();
	test_small_samples_are_exact();
	test_merged_distributions_add_up();
	test_log2_histogram_buckets();
	test_loglin_buckets_tile_the_line_finely();
	test_bimodal_split_is_flagged();
	test_unimodal_is_not_flagged();
	test_rep_stats_interval();
	test_parse_size();
	test_tree_follows_tang_appendix_c();
	test_order_is_a_permutation();
	test_forward_stream_is_prefix_stable();
	test_data_offsets_across_passes();
	test_json_writer();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
