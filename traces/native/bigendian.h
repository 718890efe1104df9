/*
 * bigendian.h - the network's byte order: the fields of IP, TCP and RPC headers, read and
 * written whatever the host's order.
 */
#ifndef BIGENDIAN_H
#define BIGENDIAN_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

#endif
