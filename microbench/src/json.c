/*
 * json.c - the streaming JSON writer.
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void json_init(struct json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->count[0] = 0;
	j->pending_key = 0;
}

/* Separate this value from the previous one at the same level, unless it follows a key. */
static void before_value(struct json *j)
{
	if (j->pending_key) {
		j->pending_key = 0;
		return;
	}
	if (j->count[j->depth]++ > 0)
		fputc(',', j->out);
}

static void open_level(struct json *j, char c)
{
	before_value(j);
	fputc(c, j->out);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->count[j->depth] = 0;
}

static void close_level(struct json *j, char c)
{
	fputc(c, j->out);
	if (j->depth > 0)
		j->depth--;
	if (j->depth == 0)
		fputc('\n', j->out);
}

void json_begin_object(struct json *j) { open_level(j, '{'); }
void json_end_object(struct json *j) { close_level(j, '}'); }
void json_begin_array(struct json *j) { open_level(j, '['); }
void json_end_array(struct json *j) { close_level(j, ']'); }

static void write_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void json_key(struct json *j, const char *key)
{
	before_value(j);
	write_escaped(j->out, key);
	fputc(':', j->out);
	j->pending_key = 1;
}

void json_string(struct json *j, const char *s)
{
	before_value(j);
	if (s)
		write_escaped(j->out, s);
	else
		fputs("null", j->out);
}

void json_u64(struct json *j, uint64_t v)
{
	before_value(j);
	fprintf(j->out, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	before_value(j);
	fprintf(j->out, "%" PRId64, v);
}

void json_double(struct json *j, double v)
{
	before_value(j);
	if (isfinite(v))
		fprintf(j->out, "%.10g", v);
	else
		fputs("null", j->out);
}

void json_bool(struct json *j, int v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
	before_value(j);
	fputs("null", j->out);
}

void json_kv_string(struct json *j, const char *key, const char *s) { json_key(j, key); json_string(j, s); }
void json_kv_u64(struct json *j, const char *key, uint64_t v) { json_key(j, key); json_u64(j, v); }
void json_kv_i64(struct json *j, const char *key, int64_t v) { json_key(j, key); json_i64(j, v); }
void json_kv_double(struct json *j, const char *key, double v) { json_key(j, key); json_double(j, v); }
void json_kv_bool(struct json *j, const char *key, int v) { json_key(j, key); json_bool(j, v); }

void json_kv_u64_array(struct json *j, const char *key, const uint64_t *values, size_t n)
{
	json_key(j, key);
	json_begin_array(j);
	for (size_t i = 0; i < n; i++)
		json_u64(j, values[i]);
	json_end_array(j);
}
