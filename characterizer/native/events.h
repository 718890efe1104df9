/* events.h - what every C pass reads the event table by (characterizer/arrays.py). */
#ifndef FSBM_EVENTS_H
#define FSBM_EVENTS_H

#include <stdint.h>

/* A value the trace did not give (arrays.MISSING). */
#define MISSING INT64_MIN

/* The bytes an access really moved: its result when known (0 at end of file), else the
 * bytes it asked for (arrays.access_lengths). */
static inline int64_t access_length(int64_t size, int64_t ret)
{
	return ret >= 0 ? ret : size != MISSING ? size : 0;
}

#endif
