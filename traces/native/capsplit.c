/*
 * capsplit - a packet capture cut into parts by connection, for tshark to dissect the parts
 * in parallel.
 *
 * Cutting by time does not work for NFS over TCP: tshark cannot pick up an RPC record stream
 * in the middle of a record.  So each TCP connection (its two addresses and ports) goes whole
 * into one part, from its first segment on, and so does everything else between two hosts
 * (UDP, whose datagrams may come in IP fragments that carry no ports): calls meet their
 * replies, and records their continuations.  Beside each part, a .frames file holds each of
 * its packets' numbers in the whole capture (8 bytes each, little-endian), so that tshark's
 * frame numbers can be put back.
 *
 * usage: capsplit N OUT CAPTURE  ->  OUT-0.cap .. OUT-<N-1>.cap, OUT-0.frames ..
 * pcap (micro- or nanosecond stamps, either byte order) or pcapng, whose section headers,
 * interface descriptions and other blocks go to every part.  Exit 3 for anything else, 2 for
 * a damaged or cut-short capture: the caller then parses it whole, which says what is wrong
 * with it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

enum { EXIT_DAMAGED = 2, EXIT_NOT_PCAP = 3, MAX_PARTS = 256, MAX_RECORD = 1 << 26, MAX_INTERFACES = 1024 };

struct part {
	FILE *packets, *frames;
};

static struct part parts[MAX_PARTS];
static long nparts;
static uint64_t frame;

static int swapped;

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Both ends of a conversation in one order, whichever way the packet went. */
static uint64_t conversation(const uint8_t *a, const uint8_t *b, size_t len, int ports, uint16_t pa, uint16_t pb)
{
	int c = memcmp(a, b, len);
	uint8_t port[4];
	uint64_t h = 0xcbf29ce484222325ULL;

	if (c > 0 || (c == 0 && ports && pa > pb)) {
		const uint8_t *t = a;
		uint16_t tp = pa;

		a = b;
		b = t;
		pa = pb;
		pb = tp;
	}
	h = fnv(fnv(h, a, len), b, len);
	if (ports) {
		port[0] = (uint8_t)(pa >> 8), port[1] = (uint8_t)pa, port[2] = (uint8_t)(pb >> 8), port[3] = (uint8_t)pb;
		h = fnv(h, port, 4);
	}
	return h ^ (h >> 29);
}

/* A TCP segment whole in one IP packet: by connection; anything else: by host pair. */
static uint64_t ipv4_key(const uint8_t *p, size_t n)
{
	size_t ihl;
	int fragment;

	if (n < 20 || (p[0] >> 4) != 4)
		return 0;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	fragment = (be16(p + 6) & 0x3fff) != 0; /* more fragments, or an offset */
	if (p[9] == 6 && !fragment && n >= ihl + 4)
		return conversation(p + 12, p + 16, 4, 1, be16(p + ihl), be16(p + ihl + 2));
	return conversation(p + 12, p + 16, 4, 0, 0, 0);
}

static uint64_t ipv6_key(const uint8_t *p, size_t n)
{
	size_t off = 40;
	int next, fragment = 0;

	if (n < 40 || (p[0] >> 4) != 6)
		return 0;
	next = p[6];
	while (off + 8 <= n && (next == 0 || next == 43 || next == 60 || next == 44 || next == 51)) {
		size_t len = next == 44 ? 8 : next == 51 ? ((size_t)p[off + 1] + 2) * 4 : ((size_t)p[off + 1] + 1) * 8;

		fragment |= next == 44;
		next = p[off];
		off += len;
	}
	if (next == 6 && !fragment && n >= off + 4)
		return conversation(p + 8, p + 24, 16, 1, be16(p + off), be16(p + off + 2));
	return conversation(p + 8, p + 24, 16, 0, 0, 0);
}

static uint64_t ip_key(const uint8_t *p, size_t n)
{
	if (n < 1)
		return 0;
	return (p[0] >> 4) == 4 ? ipv4_key(p, n) : (p[0] >> 4) == 6 ? ipv6_key(p, n) : 0;
}

/* What part a packet of this link type goes to: its IP conversation's, else the first. */
static uint64_t packet_key(const uint8_t *p, size_t n, uint32_t linktype)
{
	size_t off;
	uint16_t type;

	switch (linktype) {
	case 1: /* Ethernet, with any VLAN tags */
		if (n < 14)
			return 0;
		type = be16(p + 12);
		off = 14;
		while ((type == 0x8100 || type == 0x88a8) && n >= off + 4) {
			type = be16(p + off + 2);
			off += 4;
		}
		return type == 0x0800 || type == 0x86dd ? ip_key(p + off, n - off) : 0;
	case 113: /* Linux cooked */
		return n >= 16 ? ip_key(p + 16, n - 16) : 0;
	case 276: /* Linux cooked v2 */
		return n >= 20 ? ip_key(p + 20, n - 20) : 0;
	case 0: /* BSD loopback */
	case 108:
		return n >= 4 ? ip_key(p + 4, n - 4) : 0;
	case 12: /* raw IP */
	case 14:
	case 101:
	case 228:
	case 229:
		return ip_key(p, n);
	default:
		return 0;
	}
}

static void die(int code, const char *path, const char *why)
{
	fprintf(stderr, "%s: %s\n", path, why);
	exit(code);
}

static void to_all(const uint8_t *bytes, size_t n)
{
	for (long k = 0; k < nparts; k++)
		fwrite(bytes, 1, n, parts[k].packets);
}

/* One packet: its bytes (`block`, n of them, a record or a whole block) go to its part, and
 * its number to the part's frames. */
static void to_part(const uint8_t *block, size_t n, const uint8_t *data, size_t len, uint32_t linktype)
{
	struct part *to = &parts[packet_key(data, len, linktype) % (uint64_t)nparts];
	uint8_t number[8];

	frame++;
	for (int i = 0; i < 8; i++)
		number[i] = (uint8_t)(frame >> (8 * i)); /* little-endian, whatever the machine */
	fwrite(block, 1, n, to->packets);
	fwrite(number, 1, sizeof(number), to->frames);
}

static void split_pcap(FILE *in, const char *input, const uint8_t header[24])
{
	uint8_t *record = NULL;
	size_t cap = 0;
	uint32_t linktype = u32(header + 20) & 0x0fffffff;

	to_all(header, 24);
	for (;;) {
		uint8_t head[16];
		size_t got = fread(head, 1, sizeof(head), in);
		uint32_t length;

		if (got == 0)
			break;
		length = u32(head + 8);
		if (got != sizeof(head) || length > MAX_RECORD)
			die(EXIT_DAMAGED, input, "cut short or damaged");
		if (16 + (size_t)length > cap) {
			cap = 16 + (size_t)length;
			record = xrealloc(record, cap);
		}
		memcpy(record, head, 16);
		if (fread(record + 16, 1, length, in) != length)
			die(EXIT_DAMAGED, input, "cut short in the middle of a packet");
		to_part(record, 16 + length, record + 16, length, linktype);
	}
	free(record);
}

/* The block whose first `have` bytes are `start` (its type and length first), all of it, in
 * *block; its length. */
static uint32_t read_block(FILE *in, const char *input, const uint8_t *start, size_t have, uint32_t minimum,
			   uint8_t **block, size_t *cap)
{
	uint32_t length = u32(start + 4);

	if (length < minimum || length > MAX_RECORD || length % 4)
		die(EXIT_DAMAGED, input, "a block of an impossible length");
	if (length > *cap) {
		*cap = length;
		*block = xrealloc(*block, *cap);
	}
	memcpy(*block, start, have);
	if (fread(*block + have, 1, length - have, in) != length - have)
		die(EXIT_DAMAGED, input, "cut short in the middle of a block");
	return length;
}

/* pcapng: blocks of (type, length, body, length).  A section header gives the byte order and
 * starts the interfaces again; packets (enhanced, simple, obsolete) go to their parts. */
static void split_pcapng(FILE *in, const char *input, const uint8_t first[8])
{
	uint32_t linktypes[MAX_INTERFACES];
	uint8_t *block = NULL;
	size_t cap = 0, ninterfaces = 0;
	int have_first = 1;

	for (;;) {
		uint8_t head[8];
		uint32_t type, length;

		if (have_first) {
			memcpy(head, first, 8);
			have_first = 0;
		} else {
			size_t got = fread(head, 1, 8, in);

			if (got == 0)
				break;
			if (got != 8)
				die(EXIT_DAMAGED, input, "cut short in the middle of a block");
		}
		memcpy(&type, head, 4);
		if (type == 0x0a0d0d0a) { /* the byte order is in the body: read it before the length */
			uint8_t start[12];
			uint32_t magic;

			memcpy(start, head, 8);
			if (fread(start + 8, 1, 4, in) != 4)
				die(EXIT_DAMAGED, input, "cut short in a section header");
			memcpy(&magic, start + 8, 4);
			if (magic != 0x1a2b3c4d && magic != 0x4d3c2b1a)
				die(EXIT_DAMAGED, input, "a section header with no byte order");
			swapped = magic == 0x4d3c2b1a;
			ninterfaces = 0;
			length = read_block(in, input, start, sizeof(start), 28, &block, &cap);
		} else {
			type = u32(head);
			length = read_block(in, input, head, 8, 12, &block, &cap);
		}
		if (type == 1 && length >= 20) { /* an interface: its link type */
			if (ninterfaces < MAX_INTERFACES)
				linktypes[ninterfaces++] = (uint32_t)(swapped ? (block[8] << 8 | block[9]) : (block[9] << 8 | block[8]));
			to_all(block, length);
		} else if (type == 6 && length >= 32) { /* enhanced packet */
			uint32_t interface = u32(block + 8), len = u32(block + 20);

			if (len > length - 32)
				die(EXIT_DAMAGED, input, "a packet longer than its block");
			to_part(block, length, block + 28, len, interface < ninterfaces ? linktypes[interface] : 0);
		} else if (type == 3 && length >= 16) { /* simple packet, of the first interface */
			to_part(block, length, block + 12, length - 16, ninterfaces ? linktypes[0] : 0);
		} else if (type == 2 && length >= 32) { /* obsolete packet */
			uint32_t interface = (uint32_t)(swapped ? (block[8] << 8 | block[9]) : (block[9] << 8 | block[8]));
			uint32_t len = u32(block + 20);

			if (len > length - 32)
				die(EXIT_DAMAGED, input, "a packet longer than its block");
			to_part(block, length, block + 28, len, interface < ninterfaces ? linktypes[interface] : 0);
		} else { /* section headers, statistics, names, secrets: every part keeps them */
			to_all(block, length);
		}
	}
	free(block);
}

int main(int argc, char **argv)
{
	uint8_t header[24];
	const char *input;
	uint32_t magic;
	FILE *in;

	if (argc != 4 || (nparts = strtol(argv[1], NULL, 10)) < 1 || nparts > MAX_PARTS) {
		fputs("usage: capsplit N OUT CAPTURE (1 <= N <= 256)\n", stderr);
		return EXIT_DAMAGED;
	}
	input = argv[3];
	in = fopen(input, "rb");
	if (!in)
		die(EXIT_DAMAGED, input, strerror(errno));
	if (fread(header, 1, 8, in) != 8)
		die(EXIT_NOT_PCAP, input, "not a pcap or pcapng file");
	memcpy(&magic, header, 4);
	for (long k = 0; k < nparts; k++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s-%ld.cap", argv[2], k);
		parts[k].packets = fopen(path, "wb");
		snprintf(path, sizeof(path), "%s-%ld.frames", argv[2], k);
		parts[k].frames = fopen(path, "wb");
		if (!parts[k].packets || !parts[k].frames)
			die(EXIT_DAMAGED, path, strerror(errno));
	}
	if (magic == 0x0a0d0d0a) {
		split_pcapng(in, input, header);
	} else if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d || magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1) {
		swapped = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
		if (fread(header + 8, 1, 16, in) != 16)
			die(EXIT_DAMAGED, input, "cut short in the file header");
		split_pcap(in, input, header);
	} else {
		die(EXIT_NOT_PCAP, input, "not a pcap or pcapng file");
	}
	for (long k = 0; k < nparts; k++)
		if (fclose(parts[k].packets) != 0 || fclose(parts[k].frames) != 0)
			die(EXIT_DAMAGED, argv[2], "writing a part failed");
	fclose(in);
	return 0;
}
