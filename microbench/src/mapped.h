/*
 * mapped.h - reading a file region through a mapping, as git hashes a file or ripgrep
 * searches one: the data arrives by page faults, which no read call shows.
 */
#ifndef FSBENCH_MAPPED_H
#define FSBENCH_MAPPED_H

#include <stdint.h>

/*
 * Map [offset, offset + length) of `fd` read-only (from the page holding `offset`), touch
 * one byte of every page in it, unmap.  0, or -1 with errno set (mmap or munmap failed).
 * The caller keeps the region inside the file: a touch past its end is SIGBUS.
 */
int read_mapped(int fd, uint64_t offset, uint64_t length);

#endif
