/* access_flags.h - the bits sequence.c sets on each data access (sequentiality.py: FLAGS). */
#ifndef FSBM_ACCESS_FLAGS_H
#define FSBM_ACCESS_FLAGS_H

enum { CONSECUTIVE = 1, SEQUENTIAL = 2, INTERLEAVED = 8, RESUMES = 16, IN_STREAM = 32 };

/* An access is IN_STREAM where the one before it its way since the open began at most this many
 * bytes past the end of the one before that: a stream readahead may be riding (sequence.c). */
#define STREAM_GAP_BYTES 16384

#endif
