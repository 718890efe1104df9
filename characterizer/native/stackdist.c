/*
 * stackdist.c - Mattson's LRU stack distances in one pass (Mattson et al. 1970), the
 * reuse curve's core: for each reference, how many distinct blocks were referenced since
 * the previous reference to the same block.  A reference hits in an LRU cache of C
 * blocks exactly when its distance is < C, so one pass gives every cache size.
 *
 * The caller supplies prev[i], the index of the previous reference to the same block
 * (-1 for a first reference), which fsbm_previous_reference finds.  A Fenwick tree over
 * reference positions marks the latest reference of every block; the distance is the
 * count of marks strictly between prev[i] and i.  O(N log N) time, O(N) memory.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mix.h"

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

static void fenwick_add(int32_t *tree, int64_t n, int64_t i, int32_t delta)
{
	for (i++; i <= n; i += i & -i)
		tree[i] += delta;
}

/* Sum of marks at positions [0, i]. */
static int64_t fenwick_prefix(const int32_t *tree, int64_t i)
{
	int64_t sum = 0;

	for (i++; i > 0; i -= i & -i)
		sum += tree[i];
	return sum;
}

/* distance[i] = distinct blocks referenced between prev[i] and i, or -1 for a first
 * reference.  Returns 0, or -1 if memory ran out. */
int fsbm_stack_distances(const int64_t *prev, int64_t n, int64_t *distance)
{
	int32_t *tree = calloc((size_t)n + 1, sizeof(*tree));

	if (!tree)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		int64_t p = prev[i];

		if (p >= 0) {
			distance[i] = fenwick_prefix(tree, i - 1) - fenwick_prefix(tree, p);
			fenwick_add(tree, n, p, -1);
		} else {
			distance[i] = -1;
		}
		fenwick_add(tree, n, i, 1);
	}
	free(tree);
	return 0;
}
