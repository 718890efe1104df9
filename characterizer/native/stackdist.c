/*
 * stackdist.c - Mattson's LRU stack distances in one pass (Mattson et al. 1970), the
 * reuse curve's core: for each reference, how many distinct blocks were referenced since
 * the previous reference to the same block.  A reference hits in an LRU cache of C
 * blocks exactly when its distance is < C, so one pass gives every cache size.
 *
 * The caller supplies prev[i], the index of the previous reference to the same block
 * (-1 for a first reference), which fsbm_previous_reference finds.  The latest reference
 * of every block is marked (struct marks); the distance is the count of marks strictly
 * between prev[i] and i.  O(N log N) time, O(N) memory.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mix.h"

/* How many references ahead a key's slot is fetched: the table is out of cache, and a
 * probe would otherwise wait on every reference's slot in turn. */
#define PREFETCH_AHEAD 16

/* A key and the index of its latest reference, side by side so that a probe touches one
 * cache line; at < 0 marks an empty slot. */
struct latest {
	int64_t key;
	int64_t at;
};

static struct latest *empty_slots(size_t cap)
{
	struct latest *slot = malloc(cap * sizeof(*slot));

	if (slot)
		for (size_t i = 0; i < cap; i++)
			slot[i].at = -1;
	return slot;
}

/* The slot of `key` in a table of mask + 1 (a power of two) slots: its own, or the empty
 * one where it would go. */
static size_t slot_of(const struct latest *slot, size_t mask, int64_t key)
{
	size_t h = mix((uint64_t)key) & mask;

	while (slot[h].at >= 0 && slot[h].key != key)
		h = (h + 1) & mask;
	return h;
}

/* prev[i] = the index of the previous reference to keys[i], or -1: one pass over the keys
 * with an open-addressing table of each key's latest index (at most half full), in place
 * of a sort.  Returns 0, or -1 if memory ran out. */
int fsbm_previous_reference(const int64_t *keys, int64_t n, int64_t *prev)
{
	size_t cap = 16, mask;
	struct latest *slot;

	while (cap < 2 * (size_t)n)
		cap <<= 1;
	mask = cap - 1;
	slot = empty_slots(cap);
	if (!slot)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			__builtin_prefetch(&slot[mix((uint64_t)keys[i + PREFETCH_AHEAD]) & mask], 1);
		size_t h = slot_of(slot, mask, keys[i]);

		prev[i] = slot[h].at;
		slot[h].key = keys[i];
		slot[h].at = i;
	}
	free(slot);
	return 0;
}

/* in[i] = whether keys[i] is one of the m keys of `set`: an open-addressing table of the
 * set (at most half full), probed once per key.  Returns 0, or -1 if memory ran out. */
int fsbm_member(const int64_t *keys, int64_t n, const int64_t *set, int64_t m, uint8_t *in)
{
	size_t cap = 16, mask;
	int64_t *slot;
	uint8_t *used;

	while (cap < 2 * (size_t)m)
		cap <<= 1;
	mask = cap - 1;
	slot = malloc(cap * sizeof(*slot));
	used = calloc(cap, 1);
	if (!slot || !used) {
		free(slot);
		free(used);
		return -1;
	}
	for (int64_t j = 0; j < m; j++) {
		size_t h = mix((uint64_t)set[j]) & mask;

		while (used[h] && slot[h] != set[j])
			h = (h + 1) & mask;
		slot[h] = set[j];
		used[h] = 1;
	}
	for (int64_t i = 0; i < n; i++) {
		size_t h = mix((uint64_t)keys[i]) & mask;

		while (used[h] && slot[h] != keys[i])
			h = (h + 1) & mask;
		in[i] = used[h];
	}
	free(slot);
	free(used);
	return 0;
}

/*
 * The latest reference of every block, as marks at reference positions: one bit a
 * position, and a Fenwick tree over words of 64 positions counting the marks in each.  A
 * count up to a position walks the tree (64 times smaller than a tree of positions: 1 MiB
 * for 16 M references, which stays in cache) and takes one popcount of a word.
 */
struct marks {
	uint64_t *bits;
	int32_t *tree; /* 1-based: tree[w + 1] covers word w */
	int64_t words;
};

static void marks_set(struct marks *m, int64_t i, int32_t delta)
{
	uint64_t bit = 1ULL << (i & 63);

	m->bits[i >> 6] = delta > 0 ? m->bits[i >> 6] | bit : m->bits[i >> 6] & ~bit;
	for (int64_t w = (i >> 6) + 1; w <= m->words; w += w & -w)
		m->tree[w] += delta;
}

/* The marks at positions [0, i]. */
static int64_t marks_upto(const struct marks *m, int64_t i)
{
	int64_t w = i >> 6, sum = __builtin_popcountll(m->bits[w] & (~0ULL >> (63 - (i & 63))));

	for (; w > 0; w -= w & -w)
		sum += m->tree[w];
	return sum;
}

/* distance[i] = distinct blocks referenced between prev[i] and i, or -1 for a first
 * reference: the marks after prev[i], which are all the marks there are (every block
 * referenced so far has one) less those up to prev[i].  Returns 0, or -1 if memory ran
 * out.  Built for processors with and without a popcount instruction, chosen at load. */
__attribute__((target_clones("popcnt", "default")))
int fsbm_stack_distances(const int64_t *prev, int64_t n, int64_t *distance)
{
	struct marks m = { .words = (n + 63) / 64 };
	int64_t distinct = 0;

	m.bits = calloc((size_t)m.words + 1, sizeof(*m.bits));
	m.tree = calloc((size_t)m.words + 1, sizeof(*m.tree));
	if (!m.bits || !m.tree) {
		free(m.bits);
		free(m.tree);
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t p = prev[i];

		if (p >= 0) {
			distance[i] = distinct - marks_upto(&m, p);
			marks_set(&m, p, -1);
		} else {
			distance[i] = -1;
			distinct++;
		}
		marks_set(&m, i, 1);
	}
	free(m.bits);
	free(m.tree);
	return 0;
}
