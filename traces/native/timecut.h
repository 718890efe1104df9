/*
 * timecut.h - a capture's TCP connections cut into time slices at RPC record boundaries.
 *
 * A slice is a part of the capture (capsplit --by time).  Each connection's new records go to
 * one part at a time, and the connection moves on to a later slice's part as the capture
 * reaches that slice.  A direction between two records moves at once; one in the middle of a
 * record follows once the record ends: the segment where the next record begins is cut in
 * two, the record's end for the earlier part and the rest for the later one.  So each part's
 * tshark meets each direction at a record's start (rpcstream.h).
 *
 * A reply in a later part than its call needs the call to be dissected at all: the call's
 * direction is copied into the reply's part from the byte its record began at, as a lead-in
 * whose own rows the caller drops.  Which lead-ins a part needs is known only once its
 * replies are seen, so the capture is read twice: the first pass plans the lead-ins, the
 * second (after timecut_rewind) follows the connections again and writes.
 */
#ifndef TIMECUT_H
#define TIMECUT_H

#include <stddef.h>
#include <stdint.h>

#include "flow.h"

struct timecut;

struct timecut *timecut_new(void);
void timecut_free(struct timecut *t);

/* The connections are followed again from the start; the lead-ins planned are kept. */
void timecut_rewind(struct timecut *t);

/* Bytes [from, to) of a segment's payload, for one part: the whole segment where they are all
 * of it, else a copy of the segment cut down to them. */
struct piece {
	long part;
	size_t from, to;
	int lead_in; /* its rows belong to another part */
};

/* The pieces a TCP segment (`f`, frame number `frame`, lying in time slice `slice`) goes to
 * parts in (at most `max`, in `out`, in the order each part is to receive them); their number. */
int timecut_route(struct timecut *t, const struct flow *f, uint64_t frame, long slice, struct piece *out, int max);

#endif
