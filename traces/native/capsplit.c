/*
 * capsplit - a packet capture cut into parts, for tshark to dissect the parts in parallel.
 *
 * By connection (the default): each TCP connection (its two addresses and ports) goes whole
 * into one part, from its first segment on, and so does everything else between two hosts
 * (UDP, whose datagrams may come in IP fragments that carry no ports): calls meet their
 * replies, and records their continuations.  A capture of one connection is one part.
 *
 * By time (--by time): part k is the k-th of N equal slices of the capture's bytes.  A TCP
 * connection moves on to a later slice's part as the capture reaches it, each direction at a
 * record boundary, a segment cut in two where a record begins inside it; the calls a part's
 * replies answer are copied into it as lead-ins (timecut.h).  Everything else goes by host
 * pair, as by connection.  The capture is read
 * twice: once to plan the lead-ins, once to write.
 *
 * Beside each part, a .frames file holds each of its packets' numbers in the whole capture
 * (8 bytes each, little-endian), so that tshark's frame numbers can be put back; a lead-in's
 * number has its top bit set (its rows belong to another part).
 *
 * usage: capsplit [--by connection|time] N OUT CAPTURE  ->  OUT-0.cap .. OUT-<N-1>.cap,
 * OUT-0.frames ..  pcap (micro- or nanosecond stamps, either byte order) or pcapng, whose
 * section headers, interface descriptions and other blocks go to every part.  Exit 3 for
 * anything else, 2 for a damaged or cut-short capture: the caller then parses it whole, which
 * says what is wrong with it.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "flow.h"
#include "timecut.h"

enum { EXIT_DAMAGED = 2, EXIT_NOT_PCAP = 3, MAX_PARTS = 256, MAX_RECORD = 1 << 26, MAX_INTERFACES = 1024 };

struct part {
	FILE *packets, *frames;
};

static const uint64_t LEAD_IN = 1ULL << 63;

static struct part parts[MAX_PARTS];
static long nparts;
static uint64_t frame;
static int cut_by_time, planning;
static struct timecut *cuts;
static long long capture_bytes;

static int swapped;

/* A field of the capture file itself, in the byte order its header gave. */
static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

static uint16_t u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swapped ? __builtin_bswap16(v) : v;
}

static void die(int code, const char *path, const char *why)
{
	fprintf(stderr, "%s: %s\n", path, why);
	exit(code);
}

static void to_all(const uint8_t *bytes, size_t n)
{
	if (planning)
		return;
	for (long k = 0; k < nparts; k++)
		fwrite(bytes, 1, n, parts[k].packets);
}

/* How a packet is held in the capture: a pcap record, a pcapng enhanced (or obsolete) packet
 * block, or a pcapng simple packet block. */
enum holder { PCAP_RECORD, PCAPNG_PACKET, PCAPNG_SIMPLE };

static void put32(uint8_t *p, uint32_t v)
{
	v = swapped ? __builtin_bswap32(v) : v;
	memcpy(p, &v, 4);
}

static void write_frame(struct part *to, const uint8_t *block, size_t n, uint64_t number)
{
	uint8_t bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t)(number >> (8 * i)); /* little-endian, whatever the machine */
	fwrite(block, 1, n, to->packets);
	fwrite(bytes, 1, sizeof(bytes), to->frames);
}

/*
 * The packet `data` (n bytes kept) with its TCP payload cut down to bytes [from, to), into
 * `out`; its length.  The IP length and the sequence number follow (and IPv4's header
 * checksum); the TCP checksum, which tshark does not check unless asked, does not.
 */
static size_t cut_packet(const struct flow *f, const uint8_t *data, size_t from, size_t to, uint8_t *out)
{
	size_t head = (size_t)(f->payload - data), kept_to = to < f->have ? to : f->have;
	size_t kept_from = from < kept_to ? from : kept_to, removed = f->len - (to - from);
	uint8_t *ip = out + (f->ip - data), *tcp = out + (f->tcp_header - data);
	uint32_t seq = f->seq + (uint32_t)from + (f->syn && from > 0);

	memcpy(out, data, head);
	memcpy(out + head, f->payload + kept_from, kept_to - kept_from);
	if (f->ipv6) {
		if (be16(ip + 4))
			put_be16(ip + 4, be16(ip + 4) - removed);
	} else {
		uint32_t sum = 0;
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;

		if (be16(ip + 2))
			put_be16(ip + 2, be16(ip + 2) - removed);
		ip[10] = ip[11] = 0;
		for (size_t i = 0; i + 1 < ihl; i += 2)
			sum += be16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		put_be16(ip + 10, ~sum & 0xffff);
	}
	for (int i = 0; i < 4; i++)
		tcp[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
	return head + (kept_to - kept_from);
}

/* The block holding a packet cut down to bytes [from, to) of its TCP payload, in *cut (grown
 * as needed); its length.  A pcapng block keeps its header and loses its options. */
static size_t cut_block(enum holder holder, const uint8_t *block, const uint8_t *data, const struct flow *f,
			size_t from, size_t to, uint8_t **cut, size_t *cap)
{
	size_t head = holder == PCAP_RECORD ? 16 : holder == PCAPNG_PACKET ? 28 : 12;
	size_t removed = f->len - (to - from), kept, total;
	uint32_t wire = holder == PCAP_RECORD ? u32(block + 12) : holder == PCAPNG_PACKET ? u32(block + 24) : u32(block + 8);

	if (head + (size_t)(f->payload - data) + f->have + 8 > *cap) {
		*cap = head + (size_t)(f->payload - data) + f->have + 8;
		*cut = xrealloc(*cut, *cap);
	}
	memcpy(*cut, block, head);
	kept = cut_packet(f, data, from, to, *cut + head);
	wire = wire > removed ? wire - (uint32_t)removed : (uint32_t)kept;
	if (holder == PCAP_RECORD) {
		put32(*cut + 8, (uint32_t)kept);
		put32(*cut + 12, wire);
		return head + kept;
	}
	total = head + (kept + 3) / 4 * 4 + 4;
	memset(*cut + head + kept, 0, total - 4 - head - kept);
	if (holder == PCAPNG_PACKET) {
		put32(*cut + 20, (uint32_t)kept);
		put32(*cut + 24, wire);
	} else {
		put32(*cut + 8, wire);
	}
	put32(*cut + 4, (uint32_t)total);
	put32(*cut + total - 4, (uint32_t)total);
	return total;
}

/* One packet, starting at byte `offset` of the capture: its bytes (`block`, n of them, a record
 * or a whole block, held as `holder` says) go to its part, and its number to the part's
 * frames.  By time, a TCP segment may go to several parts, whole or cut (timecut.h), its
 * number marked LEAD_IN where it is a lead-in.  Nothing is written in the planning pass. */
static void to_part(enum holder holder, const uint8_t *block, size_t n, const uint8_t *data, size_t len,
		    uint32_t linktype, long long offset)
{
	static uint8_t *cut;
	static size_t cap;
	long slice = (long)((double)offset / (double)capture_bytes * (double)nparts);
	struct piece pieces[2 * MAX_PARTS + 2];
	int npieces;
	struct flow f;

	frame++;
	slice = slice < nparts ? slice : nparts - 1;
	packet_flow(data, len, linktype, &f);
	if (cut_by_time && f.tcp) {
		npieces = timecut_route(cuts, &f, frame, slice, pieces, (int)(sizeof(pieces) / sizeof(pieces[0])));
	} else {
		/* by conversation; by time, a packet of no IP by its slice */
		pieces[0] = (struct piece){ .part = f.key || !cut_by_time ? (long)(f.key % (uint64_t)nparts) : slice,
					    .to = f.len };
		npieces = 1;
	}
	if (planning)
		return;
	for (int i = 0; i < npieces; i++) {
		const struct piece *p = &pieces[i];
		uint64_t number = p->lead_in ? frame | LEAD_IN : frame;

		size_t cut_bytes;

		if (!f.tcp || (p->from == 0 && p->to == f.len)) {
			write_frame(&parts[p->part], block, n, number);
		} else {
			cut_bytes = cut_block(holder, block, data, &f, p->from, p->to, &cut, &cap);
			write_frame(&parts[p->part], cut, cut_bytes, number);
		}
	}
}

static void split_pcap(FILE *in, const char *input, const uint8_t header[24])
{
	uint8_t *record = NULL;
	size_t cap = 0;
	uint32_t linktype = u32(header + 20) & 0x0fffffff;

	to_all(header, 24);
	for (;;) {
		uint8_t head[16];
		long long offset = ftello(in);
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
		to_part(PCAP_RECORD, record, 16 + length, record + 16, length, linktype, offset);
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
		long long offset = have_first ? 0 : ftello(in);

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
				linktypes[ninterfaces++] = u16(block + 8);
			to_all(block, length);
		} else if (type == 6 && length >= 32) { /* enhanced packet */
			uint32_t interface = u32(block + 8), len = u32(block + 20);

			if (len > length - 32)
				die(EXIT_DAMAGED, input, "a packet longer than its block");
			to_part(PCAPNG_PACKET, block, length, block + 28, len, interface < ninterfaces ? linktypes[interface] : 0,
				offset);
		} else if (type == 3 && length >= 16) { /* simple packet, of the first interface */
			to_part(PCAPNG_SIMPLE, block, length, block + 12, length - 16, ninterfaces ? linktypes[0] : 0, offset);
		} else if (type == 2 && length >= 32) { /* obsolete packet */
			uint32_t interface = u16(block + 8);
			uint32_t len = u32(block + 20);

			if (len > length - 32)
				die(EXIT_DAMAGED, input, "a packet longer than its block");
			to_part(PCAPNG_PACKET, block, length, block + 28, len, interface < ninterfaces ? linktypes[interface] : 0,
				offset);
		} else { /* section headers, statistics, names, secrets: every part keeps them */
			to_all(block, length);
		}
	}
	free(block);
}

/* One pass over the capture, from its first byte. */
static void split(FILE *in, const char *input)
{
	uint8_t header[24];
	uint32_t magic;

	frame = 0;
	swapped = 0;
	if (fseeko(in, 0, SEEK_SET) != 0 || fread(header, 1, 8, in) != 8)
		die(EXIT_NOT_PCAP, input, "not a pcap or pcapng file");
	memcpy(&magic, header, 4);
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
}

static int usage(void)
{
	fputs("usage: capsplit [--by connection|time] N OUT CAPTURE (1 <= N <= 256)\n", stderr);
	return EXIT_DAMAGED;
}

int main(int argc, char **argv)
{
	const char *input, *out;
	struct stat st;
	FILE *in;

	if (argc == 6 && strcmp(argv[1], "--by") == 0) {
		if (strcmp(argv[2], "time") != 0 && strcmp(argv[2], "connection") != 0)
			return usage();
		cut_by_time = strcmp(argv[2], "time") == 0;
		argv += 2;
		argc -= 2;
	}
	if (argc != 4 || (nparts = strtol(argv[1], NULL, 10)) < 1 || nparts > MAX_PARTS)
		return usage();
	out = argv[2];
	input = argv[3];
	in = fopen(input, "rb");
	if (!in)
		die(EXIT_DAMAGED, input, strerror(errno));
	if (fstat(fileno(in), &st) != 0 || !S_ISREG(st.st_mode))
		die(EXIT_NOT_PCAP, input, "not a file capsplit can read twice");
	capture_bytes = st.st_size > 0 ? (long long)st.st_size : 1;
	if (cut_by_time) {
		cuts = timecut_new();
		planning = 1;
		split(in, input);
		planning = 0;
		timecut_rewind(cuts);
	}
	for (long k = 0; k < nparts; k++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s-%ld.cap", out, k);
		parts[k].packets = fopen(path, "wb");
		snprintf(path, sizeof(path), "%s-%ld.frames", out, k);
		parts[k].frames = fopen(path, "wb");
		if (!parts[k].packets || !parts[k].frames)
			die(EXIT_DAMAGED, path, strerror(errno));
	}
	split(in, input);
	for (long k = 0; k < nparts; k++)
		if (fclose(parts[k].packets) != 0 || fclose(parts[k].frames) != 0)
			die(EXIT_DAMAGED, out, "writing a part failed");
	fclose(in);
	if (cuts)
		timecut_free(cuts);
	return 0;
}
