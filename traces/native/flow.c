/*
 * flow.c - a packet's conversation and TCP segment (flow.h).  Ethernet (with VLAN tags),
 * Linux cooked (v1 and v2), BSD loopback and raw IP; IPv4 and IPv6 with their extension
 * headers.  A TCP segment carried in IP fragments has no ports in its later fragments, so it
 * goes by host pair, as everything that is not TCP does.
 */
#include <string.h>

#include "flow.h"

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Both ends of a conversation in one order, whichever way the packet went (f->dir says
 * which it went). */
static uint64_t conversation(const uint8_t *a, const uint8_t *b, size_t len, int ports, uint16_t pa, uint16_t pb,
			     struct flow *f)
{
	int c = memcmp(a, b, len);
	uint8_t port[4];
	uint64_t h = 0xcbf29ce484222325ULL;

	f->dir = 0;
	if (c > 0 || (c == 0 && ports && pa > pb)) {
		const uint8_t *t = a;
		uint16_t tp = pa;

		a = b;
		b = t;
		pa = pb;
		pb = tp;
		f->dir = 1;
	}
	h = fnv(fnv(h, a, len), b, len);
	if (ports) {
		port[0] = (uint8_t)(pa >> 8), port[1] = (uint8_t)pa, port[2] = (uint8_t)(pb >> 8), port[3] = (uint8_t)pb;
		h = fnv(h, port, 4);
	}
	h ^= h >> 29;
	return h ? h : 1;
}

/* A TCP segment at `p` (n bytes kept, `wire` bytes on the wire, header included). */
static void tcp_flow(const uint8_t *p, size_t n, size_t wire, struct flow *f)
{
	size_t head;

	if (n < 20)
		return;
	head = (size_t)(p[12] >> 4) * 4;
	if (head < 20 || wire < head)
		return;
	f->tcp = 1;
	f->tcp_header = p;
	f->seq = be32(p + 4);
	f->syn = (p[13] & 0x02) != 0;
	f->payload = p + head;
	f->len = wire - head;
	f->have = n > head ? n - head : 0;
	if (f->have > f->len)
		f->have = f->len;
}

/* A TCP segment whole in one IP packet: by connection; anything else: by host pair.  An IP
 * length of 0 (a segment the sender's offload had not cut yet) is taken as what was kept. */
static void ipv4_flow(const uint8_t *p, size_t n, struct flow *f)
{
	size_t ihl, total;
	int fragment;

	if (n < 20 || (p[0] >> 4) != 4)
		return;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	total = be16(p + 2) ? be16(p + 2) : n;
	fragment = (be16(p + 6) & 0x3fff) != 0; /* more fragments, or an offset */
	if (p[9] == 6 && !fragment && n >= ihl + 4 && total >= ihl) {
		f->key = conversation(p + 12, p + 16, 4, 1, be16(p + ihl), be16(p + ihl + 2), f);
		f->ip = p;
		tcp_flow(p + ihl, n - ihl, total - ihl, f);
		return;
	}
	f->key = conversation(p + 12, p + 16, 4, 0, 0, 0, f);
}

static void ipv6_flow(const uint8_t *p, size_t n, struct flow *f)
{
	size_t off = 40, total;
	int next, fragment = 0;

	if (n < 40 || (p[0] >> 4) != 6)
		return;
	total = be16(p + 4) ? 40 + (size_t)be16(p + 4) : n;
	next = p[6];
	while (off + 8 <= n && (next == 0 || next == 43 || next == 60 || next == 44 || next == 51)) {
		size_t len = next == 44 ? 8 : next == 51 ? ((size_t)p[off + 1] + 2) * 4 : ((size_t)p[off + 1] + 1) * 8;

		fragment |= next == 44;
		next = p[off];
		off += len;
	}
	if (next == 6 && !fragment && n >= off + 4 && total >= off) {
		f->key = conversation(p + 8, p + 24, 16, 1, be16(p + off), be16(p + off + 2), f);
		f->ip = p;
		f->ipv6 = 1;
		tcp_flow(p + off, n - off, total - off, f);
		return;
	}
	f->key = conversation(p + 8, p + 24, 16, 0, 0, 0, f);
}

static void ip_flow(const uint8_t *p, size_t n, struct flow *f)
{
	if (n < 1)
		return;
	if ((p[0] >> 4) == 4)
		ipv4_flow(p, n, f);
	else if ((p[0] >> 4) == 6)
		ipv6_flow(p, n, f);
}

/* A packet of this link type, as far as capsplit reads it: its IP conversation, else none. */
void packet_flow(const uint8_t *p, size_t n, uint32_t linktype, struct flow *f)
{
	size_t off;
	uint16_t type;

	memset(f, 0, sizeof(*f));
	switch (linktype) {
	case 1: /* Ethernet, with any VLAN tags */
		if (n < 14)
			return;
		type = be16(p + 12);
		off = 14;
		while ((type == 0x8100 || type == 0x88a8) && n >= off + 4) {
			type = be16(p + off + 2);
			off += 4;
		}
		if (type == 0x0800 || type == 0x86dd)
			ip_flow(p + off, n - off, f);
		return;
	case 113: /* Linux cooked */
		if (n >= 16)
			ip_flow(p + 16, n - 16, f);
		return;
	case 276: /* Linux cooked v2 */
		if (n >= 20)
			ip_flow(p + 20, n - 20, f);
		return;
	case 0: /* BSD loopback */
	case 108:
		if (n >= 4)
			ip_flow(p + 4, n - 4, f);
		return;
	case 12: /* raw IP */
	case 14:
	case 101:
	case 228:
	case 229:
		ip_flow(p, n, f);
		return;
	default:
		return;
	}
}

