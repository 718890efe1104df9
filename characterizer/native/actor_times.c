/*
 * actor_times.c - the time between one actor's calls and the time each actor spent in calls
 * (timing.py: actor_times), in one pass over the events in trace order with each actor's
 * last start and end, where the vectorized form sorted every event by actor and gathered
 * its times.
 */
#include <stdint.h>
#include <stdlib.h>

#include "events.h"

enum { ACTOR_SPAN, INSIDE, KNOWN, FIRST, LAST, TOTALS };

/*
 * For each event after its actor's first, in trace order (`order`, or the rows' own order
 * when NULL): inter[k] its start less the actor's previous start, think[k] its start less
 * the previous call's end (its start plus its duration, 0 when unknown), at least 0.
 * totals (TOTALS entries): the actors' spans from first start to last end, summed; the
 * known durations, summed, and how many are known; the first start and last end of all.
 * Returns the number of gaps, or -1 when out of memory.
 */
int64_t fsbm_actor_times(int64_t n, const int64_t *order, const int32_t *actor, int64_t n_actors,
			 const int64_t *ts, const int64_t *dur, int64_t *inter, int64_t *think, int64_t *totals)
{
	size_t actors = (size_t)(n_actors > 0 ? n_actors : 1);
	int64_t *start = malloc(actors * sizeof(*start)), *end = malloc(actors * sizeof(*end));
	int64_t *first = malloc(actors * sizeof(*first)), *last = malloc(actors * sizeof(*last));
	int64_t gaps = 0;

	if (!start || !end || !first || !last) {
		free(start);
		free(end);
		free(first);
		free(last);
		return -1;
	}
	for (size_t a = 0; a < actors; a++) {
		start[a] = first[a] = MISSING;
		last[a] = INT64_MIN;
	}
	for (int t = 0; t < TOTALS; t++)
		totals[t] = 0;
	totals[FIRST] = INT64_MAX;
	totals[LAST] = INT64_MIN;
	for (int64_t k = 0; k < n; k++) {
		int64_t i = order ? order[k] : k;
		int32_t a = actor[i];
		int64_t known = dur[i] != MISSING ? dur[i] : 0;
		int64_t finish = ts[i] + known;

		if (start[a] != MISSING) {
			int64_t idle = ts[i] - end[a];

			inter[gaps] = ts[i] - start[a];
			think[gaps] = idle > 0 ? idle : 0;
			gaps++;
		}
		start[a] = ts[i];
		end[a] = finish;
		if (first[a] == MISSING || ts[i] < first[a])
			first[a] = ts[i];
		if (finish > last[a])
			last[a] = finish;
		totals[INSIDE] += known;
		totals[KNOWN] += dur[i] != MISSING;
		if (ts[i] < totals[FIRST])
			totals[FIRST] = ts[i];
		if (finish > totals[LAST])
			totals[LAST] = finish;
	}
	for (size_t a = 0; a < actors; a++)
		if (first[a] != MISSING)
			totals[ACTOR_SPAN] += last[a] - first[a];
	free(start);
	free(end);
	free(first);
	free(last);
	return gaps;
}
