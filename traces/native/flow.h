/*
 * flow.h - what capsplit reads of a packet: its conversation, and for a TCP segment whole in
 * one IP packet, its direction, sequence number and payload.
 */
#ifndef FLOW_H
#define FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "bigendian.h"

/* What capsplit reads of a packet. */
struct flow {
	uint64_t key;          /* the conversation: a TCP connection, or a host pair; 0 for no IP */
	int tcp;
	int dir;               /* which way, 0 or 1, in the conversation's own order */
	int syn;
	uint32_t seq;
	const uint8_t *payload;
	size_t have, len;      /* the payload's bytes the capture kept, and its length on the wire */
	const uint8_t *ip;     /* the IP header, and the TCP header, of a TCP segment */
	const uint8_t *tcp_header;
	int ipv6;
};

/* The flow of a packet of this link type (`n` bytes kept); a key of 0 where it holds no IP. */
void packet_flow(const uint8_t *p, size_t n, uint32_t linktype, struct flow *f);

#endif
