/*
 * timecut.c - a capture's TCP connections cut into time slices at RPC record boundaries
 * (timecut.h).
 *
 * Per connection: the part it is in, and per direction its records (rpcstream.h), the calls
 * sent that way and not yet answered, and the lead-ins planned for it.  Connections live in
 * an open-addressing table keyed by their conversation; calls in one per direction keyed by
 * xid.  A call still unanswered when its connection has moved on twice since it was sent is
 * forgotten: its reply, if it ever comes, is dissected without it, as one tshark dissects a
 * reply whose call it never saw.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "rpcstream.h"
#include "timecut.h"

struct call {
	uint32_t xid;
	int used;
	uint64_t frame;  /* where its record begins: the segment, */
	uint32_t offset; /* and the byte of its payload */
	long part;       /* the part its record went to */
};

struct calls {
	struct call *slot;
	size_t cap, count;
};

/* A direction copied into a later part from a record's start on, until it moves there. */
struct lead {
	long part;
	uint64_t frame;
	uint32_t offset;
};

struct side {
	struct rpc_direction rpc;
	long part;          /* where its bytes go: its connection's part, or an earlier one until the
			       record it is in the middle of ends */
	struct calls calls; /* sent this way, not yet answered */
	struct lead *leads;
	int nleads;
};

struct conn {
	uint64_t key; /* 0: a free slot */
	long part;    /* where its new records go; -1 before its first segment */
	struct side side[2];
};

struct timecut {
	struct conn *slot;
	size_t cap, count;
};

static size_t xid_home(uint32_t xid, size_t cap)
{
	return ((size_t)xid * 2654435761u) & (cap - 1);
}

static struct call *calls_find(struct calls *c, uint32_t xid)
{
	if (!c->cap)
		return NULL;
	for (size_t i = xid_home(xid, c->cap);; i = (i + 1) & (c->cap - 1)) {
		if (!c->slot[i].used)
			return NULL;
		if (c->slot[i].xid == xid)
			return &c->slot[i];
	}
}

static void calls_insert(struct calls *c, const struct call *call)
{
	size_t i = xid_home(call->xid, c->cap);

	while (c->slot[i].used)
		i = (i + 1) & (c->cap - 1);
	c->slot[i] = *call;
	c->count++;
}

/* The table again at `cap` slots, holding the calls sent in part `since` or later. */
static void calls_rebuild(struct calls *c, size_t cap, long since)
{
	struct call *old = c->slot;
	size_t old_cap = c->cap;

	c->slot = xrealloc(NULL, cap * sizeof(*c->slot));
	memset(c->slot, 0, cap * sizeof(*c->slot));
	c->cap = cap;
	c->count = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used && old[i].part >= since)
			calls_insert(c, &old[i]);
	free(old);
}

/* A call sent: a retransmission of one not yet answered keeps the first copy's. */
static void calls_put(struct calls *c, const struct rpc_message *m, long part)
{
	struct call call = { .xid = m->xid, .used = 1, .frame = m->frame, .offset = m->offset, .part = part };

	if (calls_find(c, m->xid))
		return;
	if ((c->count + 1) * 2 > c->cap)
		calls_rebuild(c, c->cap ? c->cap * 2 : 64, 0);
	calls_insert(c, &call);
}

/* A call answered leaves the table; the calls after it in its run move back (linear probing). */
static void calls_remove(struct calls *c, struct call *gone)
{
	size_t mask = c->cap - 1, i = (size_t)(gone - c->slot), j = i;

	c->slot[i].used = 0;
	c->count--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!c->slot[j].used)
			return;
		home = xid_home(c->slot[j].xid, c->cap);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue; /* still reachable from its home */
		c->slot[i] = c->slot[j];
		c->slot[j].used = 0;
		i = j;
	}
}

/* The direction is to be copied into `part` from the start of `call`'s record on (the earliest
 * asked for). */
static void plan_lead(struct side *s, long part, const struct call *call)
{
	for (int i = 0; i < s->nleads; i++)
		if (s->leads[i].part == part) {
			struct lead *l = &s->leads[i];

			if (call->frame < l->frame || (call->frame == l->frame && call->offset < l->offset))
				l->frame = call->frame, l->offset = call->offset;
			return;
		}
	s->leads = xrealloc(s->leads, (size_t)(s->nleads + 1) * sizeof(*s->leads));
	s->leads[s->nleads++] = (struct lead){ .part = part, .frame = call->frame, .offset = call->offset };
}

static void side_start(struct side *s)
{
	rpc_direction_init(&s->rpc);
	s->part = -1;
	free(s->calls.slot);
	memset(&s->calls, 0, sizeof(s->calls));
}

static struct conn *find(struct conn *slot, size_t cap, uint64_t key)
{
	size_t i = (size_t)(key ^ key >> 32) & (cap - 1);

	while (slot[i].key && slot[i].key != key)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static struct conn *conn_get(struct timecut *t, uint64_t key)
{
	struct conn *c;

	if ((t->count + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct conn *slot = xrealloc(NULL, cap * sizeof(*slot));

		memset(slot, 0, cap * sizeof(*slot));
		for (size_t i = 0; i < t->cap; i++)
			if (t->slot[i].key)
				*find(slot, cap, t->slot[i].key) = t->slot[i];
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	c = find(t->slot, t->cap, key);
	if (!c->key) {
		c->key = key;
		c->part = -1;
		for (int d = 0; d < 2; d++) {
			memset(&c->side[d], 0, sizeof(c->side[d]));
			side_start(&c->side[d]);
		}
		t->count++;
	}
	return c;
}

struct timecut *timecut_new(void)
{
	struct timecut *t = xrealloc(NULL, sizeof(*t));

	memset(t, 0, sizeof(*t));
	return t;
}

void timecut_rewind(struct timecut *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i].key) {
			t->slot[i].part = -1;
			side_start(&t->slot[i].side[0]);
			side_start(&t->slot[i].side[1]);
		}
}

void timecut_free(struct timecut *t)
{
	for (size_t i = 0; i < t->cap; i++)
		for (int d = 0; d < 2 && t->slot[i].key; d++) {
			free(t->slot[i].side[d].calls.slot);
			free(t->slot[i].side[d].leads);
		}
	free(t->slot);
	free(t);
}

/* One more piece for `out`, which holds n of at most max; their number after it. */
static int add_piece(struct piece *out, int n, int max, long part, size_t from, size_t to, int lead_in)
{
	if (n < max)
		out[n++] = (struct piece){ .part = part, .from = from, .to = to, .lead_in = lead_in };
	return n;
}

/* The connection moves on to `slice`: a direction between records goes there at once, one in
 * the middle of a record once the record ends; calls sent before the part it leaves are
 * forgotten. */
static void move_on(struct conn *c, long slice)
{
	long leaving = c->part;

	c->part = slice;
	for (int d = 0; d < 2; d++) {
		struct side *x = &c->side[d];

		if (rpc_between_records(&x->rpc))
			x->part = slice;
		calls_rebuild(&x->calls, x->calls.cap ? x->calls.cap : 64, leaving);
	}
}

int timecut_route(struct timecut *t, const struct flow *f, uint64_t frame, long slice, struct piece *out, int max)
{
	struct conn *c = conn_get(t, f->key);
	struct side *s = &c->side[f->dir], *other = &c->side[!f->dir];
	struct rpc_message m[RPC_MESSAGES_PER_SEGMENT];
	long first, before;
	size_t split;
	int n, moves, pieces = 0;

	if (c->part < 0)
		c->part = slice;
	if (s->part < 0)
		s->part = c->part;
	if (slice > c->part && s->rpc.sync != RPC_LOST && other->rpc.sync != RPC_LOST)
		move_on(c, slice);
	before = s->part;
	n = rpc_segment(&s->rpc, frame, f->seq, f->syn, f->payload, f->have, f->len, m, &first);
	/* A direction still in an earlier part moves at the first record to begin: the bytes
	 * before it end the record it was in, there. */
	moves = before < c->part && first >= 0 && s->rpc.sync != RPC_LOST;
	split = moves ? (size_t)first : f->len;
	if (split > 0 || f->len == 0)
		pieces = add_piece(out, pieces, max, before, 0, split, 0);
	for (int i = 0; i < s->nleads; i++) {
		const struct lead *l = &s->leads[i];
		size_t from = frame == l->frame ? l->offset : 0, to = moves && l->part == c->part ? split : f->len;

		if (l->part > before && frame >= l->frame && to > from)
			pieces = add_piece(out, pieces, max, l->part, from, to, 1);
	}
	if (moves) {
		pieces = add_piece(out, pieces, max, c->part, split, f->len, 0);
		s->part = c->part;
	}
	for (int i = 0; i < n; i++) {
		long part = moves && m[i].frame == frame && m[i].offset >= split ? c->part : before;
		struct call *call;

		if (m[i].call) {
			calls_put(&s->calls, &m[i], part);
		} else if ((call = calls_find(&other->calls, m[i].xid))) {
			if (call->part < part)
				plan_lead(other, part, call);
			calls_remove(&other->calls, call);
		}
	}
	return pieces;
}
