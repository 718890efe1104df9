/*
 * rpcstream.c - where RPC records begin in one direction of a TCP connection (rpcstream.h).
 *
 * A direction is followed from its first data on, which is taken to begin a record, as
 * tshark takes it.  Each fragment's marker gives the bytes to skip to the next; a record's
 * first fragment must also begin like an RPC message (RFC 5531: a call of RPC version 2, or
 * a reply accepted or denied), which keeps a connection that carries something else from
 * being read as records.
 */
#include <string.h>

#include "bigendian.h"
#include "rpcstream.h"

enum {
	MARKER_BYTES = 4,
	MESSAGE_HEAD_BYTES = 12, /* xid, message type, and the RPC version or the reply's status */
	LAST_FRAGMENT = (int)0x80000000u,
};

void rpc_direction_init(struct rpc_direction *d)
{
	memset(d, 0, sizeof(*d));
	d->sync = RPC_UNSEEN;
	d->record_start = 1;
}

int rpc_between_records(const struct rpc_direction *d)
{
	return d->sync != RPC_LOST && d->skip == 0 && d->head_have == 0 && d->record_start;
}

/* The direction is no longer followed; the messages found before that in the segment stand. */
static int lost(struct rpc_direction *d, int found)
{
	d->sync = RPC_LOST;
	return found;
}

/* What a record's first 16 bytes (marker, xid, message type, and the RPC version or the
 * reply's status) begin: 1 a call of RPC version 2, 0 a reply accepted or denied, -1 no RPC
 * message. */
static int message_kind(const uint8_t head[MARKER_BYTES + MESSAGE_HEAD_BYTES])
{
	if ((be32(head) & 0x7fffffffu) < MESSAGE_HEAD_BYTES)
		return -1;
	switch (be32(head + 8)) {
	case 0:
		return be32(head + 12) == 2 ? 1 : -1;
	case 1:
		return be32(head + 12) <= 1 ? 0 : -1;
	default:
		return -1;
	}
}

/* A fragment's head is complete: read its marker (and, at a record's start, its message),
 * and set the bytes to skip.  Returns 1 for a message, 0 for a later fragment, -1 for bytes
 * that are no RPC. */
static int read_head(struct rpc_direction *d, struct rpc_message *m)
{
	uint32_t marker = be32(d->head), length = marker & 0x7fffffffu, read = (uint32_t)d->head_have - MARKER_BYTES;
	int starts = d->record_start, kind;

	d->head_have = 0;
	d->record_start = (marker & (uint32_t)LAST_FRAGMENT) != 0;
	if (!starts) {
		d->skip = length;
		return 0;
	}
	if ((kind = message_kind(d->head)) < 0)
		return -1;
	m->xid = be32(d->head + 4);
	m->call = kind;
	m->frame = d->head_frame;
	m->offset = d->head_offset;
	d->skip = length - read;
	return 1;
}

int rpc_segment(struct rpc_direction *d, uint64_t frame, uint32_t seq, int syn, const uint8_t *data, size_t have,
		size_t len, struct rpc_message *out, long *first_start)
{
	size_t off = 0;
	int n = 0;

	*first_start = -1;
	if (syn) {
		d->next_seq = seq + 1;
		if (d->sync == RPC_UNSEEN)
			d->sync = RPC_SYNCED;
		seq++;
	}
	if (len == 0)
		return 0;
	/* A direction is taken up again after a gap (bytes the capture missed) at a segment that
	 * begins like an RPC message, as a dissector meeting it there would read it. */
	if (d->sync == RPC_LOST || (d->sync == RPC_SYNCED && (int32_t)(seq - d->next_seq) > 0)) {
		if (have < MARKER_BYTES + MESSAGE_HEAD_BYTES || message_kind(data) < 0)
			return lost(d, 0);
		rpc_direction_init(d);
	}
	if (d->sync == RPC_UNSEEN) {
		d->sync = RPC_SYNCED;
		d->next_seq = seq;
	}
	if ((int32_t)(seq - d->next_seq) < 0) /* old bytes again: a retransmission, if all of them are */
		return (int32_t)(seq + (uint32_t)len - d->next_seq) <= 0 ? 0 : lost(d, 0);
	d->next_seq += (uint32_t)len;
	while (off < len) {
		size_t take;
		int need;

		if (d->skip) {
			take = d->skip < len - off ? d->skip : len - off;
			d->skip -= (uint32_t)take;
			off += take;
			continue;
		}
		if (d->head_have == 0) {
			d->head_frame = frame;
			d->head_offset = (uint32_t)off;
			if (d->record_start && *first_start < 0)
				*first_start = (long)off;
		}
		need = d->record_start ? MARKER_BYTES + MESSAGE_HEAD_BYTES : MARKER_BYTES;
		take = (size_t)(need - d->head_have) < len - off ? (size_t)(need - d->head_have) : len - off;
		if (off + take > have) /* the capture kept too little of the packet to follow it */
			return lost(d, n);
		memcpy(d->head + d->head_have, data + off, take);
		d->head_have += (int)take;
		off += take;
		if (d->head_have < need)
			break;
		switch (read_head(d, &out[n])) {
		case -1:
			return lost(d, n);
		case 1:
			if (++n == RPC_MESSAGES_PER_SEGMENT)
				return lost(d, n);
			break;
		}
	}
	return n;
}
