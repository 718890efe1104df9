/*
 * windows.c - activity per window of time (timing.py: Windows), in one pass over the
 * events, where the vectorized form made two dozen passes and two sorts.
 *
 * Windows are counted from the trace's origin, w = t / window_ns.  For each window the
 * pass counts the actors that started a call in it (active) and the ns of calls inside it
 * (busy): a call's time up to the end of its first window goes to that window, and its
 * time in its last window to the last; the windows between, which a long call covers
 * whole, are written as a run (full_from .. full_to).
 */
#include <stdint.h>

#include "events.h"

/*
 * `n_windows` windows from 0, and a bitmap of (window, actor) pairs the caller sized for
 * n_windows * n_actors bits, zeroed.  Every start and end must fall in [0, n_windows *
 * window_ns): the caller checks.  active, busy and touched (the windows a call starts or
 * ends in) have n_windows entries, zeroed; full_from and full_to n entries.  Returns the
 * number of runs written.
 */
int64_t fsbm_windows(int64_t n, const int32_t *actor, int64_t n_actors, const int64_t *ts, const int64_t *dur,
		     int64_t origin, int64_t window_ns, uint64_t *seen, int64_t *active, int64_t *busy,
		     uint8_t *touched, int64_t *full_from, int64_t *full_to)
{
	int64_t runs = 0;

	for (int64_t i = 0; i < n; i++) {
		int64_t start = ts[i] - origin;
		int64_t end = start + (dur[i] != MISSING ? dur[i] : 0);
		int64_t first = start / window_ns, last = end / window_ns;
		uint64_t pair = (uint64_t)first * (uint64_t)n_actors + (uint64_t)actor[i];

		if (!(seen[pair >> 6] & (1ULL << (pair & 63)))) {
			seen[pair >> 6] |= 1ULL << (pair & 63);
			active[first]++;
		}
		touched[first] = 1;
		if (last > first) {
			touched[last] = 1;
			busy[first] += (first + 1) * window_ns - start;
			busy[last] += end - last * window_ns;
			if (last > first + 1) {
				full_from[runs] = first + 1;
				full_to[runs] = last;
				runs++;
			}
		} else {
			busy[first] += end - start;
		}
	}
	return runs;
}
