/*
 * json.h - a streaming JSON writer: it tracks nesting and commas so callers only say
 * what they write.  Output goes to one FILE.
 */
#ifndef FSBENCH_JSON_H
#define FSBENCH_JSON_H

#include <stdint.h>
#include <stdio.h>

enum { JSON_MAX_DEPTH = 32 };

struct json {
	FILE *out;
	int depth;
	int count[JSON_MAX_DEPTH]; /* members written so far at each level */
	int pending_key;           /* a key was written; the next value follows it */
};

void json_init(struct json *j, FILE *out);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s); /* NULL writes null */
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_double(struct json *j, double v);     /* non-finite writes null */
void json_bool(struct json *j, int v);
void json_null(struct json *j);

/* Key and value in one call, for the common flat members. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_i64(struct json *j, const char *key, int64_t v);
void json_kv_double(struct json *j, const char *key, double v);
void json_kv_bool(struct json *j, const char *key, int v);
/* A key and an array of n unsigned values. */
void json_kv_u64_array(struct json *j, const char *key, const uint64_t *values, size_t n);

#endif
