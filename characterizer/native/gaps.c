/*
 * gaps.c - the time between one actor's calls (timing.py: gaps), in one pass over the
 * events in trace order with each actor's last start and end, where the vectorized form
 * sorted every event by actor and gathered its times.
 */
#include <stdint.h>
#include <stdlib.h>

#define MISSING INT64_MIN

/*
 * For each event after its actor's first, in trace order (`order`, or the rows' own order
 * when NULL): inter[k] its start less the actor's previous start, think[k] its start less
 * the previous call's end (its start plus its duration, 0 when unknown), at least 0.
 * Returns the number of gaps, or -1 when out of memory.
 */
int64_t fsbm_gaps(int64_t n, const int64_t *order, const int32_t *actor, int64_t n_actors, const int64_t *ts,
		  const int64_t *dur, int64_t *inter, int64_t *think)
{
	int64_t *start = malloc((size_t)(n_actors > 0 ? n_actors : 1) * sizeof(*start));
	int64_t *end = malloc((size_t)(n_actors > 0 ? n_actors : 1) * sizeof(*end));
	int64_t gaps = 0;

	if (!start || !end) {
		free(start);
		free(end);
		return -1;
	}
	for (int64_t a = 0; a < n_actors; a++)
		start[a] = MISSING;
	for (int64_t k = 0; k < n; k++) {
		int64_t i = order ? order[k] : k;
		int32_t a = actor[i];

		if (start[a] != MISSING) {
			int64_t idle = ts[i] - end[a];

			inter[gaps] = ts[i] - start[a];
			think[gaps] = idle > 0 ? idle : 0;
			gaps++;
		}
		start[a] = ts[i];
		end[a] = ts[i] + (dur[i] != MISSING ? dur[i] : 0);
	}
	free(start);
	free(end);
	return gaps;
}
