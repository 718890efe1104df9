/* access_flags.h - the bits sequence.c sets on each data access (sequentiality.py: FLAGS). */
#ifndef FSBM_ACCESS_FLAGS_H
#define FSBM_ACCESS_FLAGS_H

enum { CONSECUTIVE = 1, SEQUENTIAL = 2, INTERLEAVED = 8, RESUMES = 16 };

#endif
