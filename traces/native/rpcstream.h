/*
 * rpcstream.h - where RPC records begin in one direction of a TCP connection.
 *
 * RPC over TCP frames each message as records of fragments, each fragment behind a 4-byte
 * marker (RFC 5531 section 11: the last-fragment bit and a 31-bit length).  A dissector
 * that meets the stream in the middle of a fragment reads its data as a marker and loses
 * the stream.  So capsplit follows each direction's markers through the segments, in order,
 * and knows where a direction stands between two records: only there may the connection
 * move to another part, whose tshark then meets both directions at a record's start.
 */
#ifndef RPCSTREAM_H
#define RPCSTREAM_H

#include <stddef.h>
#include <stdint.h>

/* What one direction's bytes are, as far as they were followed. */
enum rpc_sync {
	RPC_UNSEEN,   /* no data yet */
	RPC_SYNCED,   /* every byte so far was placed in a fragment */
	RPC_LOST,     /* a gap, an overlap, a cut-short packet or bytes that are no RPC: not followed until
			 a segment begins like an RPC message */
};

/* The start of one RPC message (a record's first fragment). */
struct rpc_message {
	uint32_t xid;
	int call;        /* 1 for a call, 0 for a reply */
	uint64_t frame;  /* the segment its record began in (its marker's first byte) */
	uint32_t offset; /* where in that segment's payload */
};

struct rpc_direction {
	enum rpc_sync sync;
	uint32_t next_seq;      /* the sequence number of the next byte expected */
	uint32_t skip;          /* bytes of the current fragment still to come */
	int record_start;       /* whether the next fragment begins a record (the last one was its record's last) */
	uint8_t head[16];       /* a fragment's marker and a message's first words, as they arrive */
	int head_have;
	uint64_t head_frame;    /* where the head being read began */
	uint32_t head_offset;
};

/* The most messages one segment is read for; a segment holding more loses its direction. */
enum { RPC_MESSAGES_PER_SEGMENT = 64 };

void rpc_direction_init(struct rpc_direction *d);

/* Whether the direction stands between two records: its bytes so far end a record. */
int rpc_between_records(const struct rpc_direction *d);

/*
 * One TCP segment of the direction (`frame`): its sequence number, whether it is a SYN, its
 * payload's length on the wire (`len`) and the bytes of it the capture kept (`data`, `have` <=
 * len).  The messages whose heads it completes go to `out` (at most RPC_MESSAGES_PER_SEGMENT);
 * their number is returned.  *first_start is where in the payload the first record to begin
 * in this segment begins, or -1.  Old bytes again (a retransmission) are passed over; bytes
 * that read as no RPC message lose the direction, as does a gap, until a segment begins like
 * an RPC message.
 */
int rpc_segment(struct rpc_direction *d, uint64_t frame, uint32_t seq, int syn, const uint8_t *data, size_t have,
		size_t len, struct rpc_message *out, long *first_start);

#endif
