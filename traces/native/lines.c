/*
 * lines.c - strace line prefixes and kinds, scanned by hand: this runs once per line
 * of logs with millions of lines, so no regular expressions.
 */
#include "lines.h"

#include <stdint.h>
#include <string.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_spaces(const char *s, size_t i, size_t len)
{
	while (i < len && s[i] == ' ')
		i++;
	return i;
}

/* Digits from s[i]; returns the index after them, the value (saturating) in *v. */
static size_t scan_number(const char *s, size_t i, size_t len, int64_t *v)
{
	int64_t n = 0;

	while (i < len && is_digit(s[i])) {
		n = n < INT64_MAX / 10 - 10 ? n * 10 + (s[i] - '0') : INT64_MAX / 10;
		i++;
	}
	*v = n;
	return i;
}

/* Fraction digits after '.', scaled to nanoseconds. */
static size_t scan_fraction(const char *s, size_t i, size_t len, int64_t *ns)
{
	int64_t scale = 100000000, v = 0;

	while (i < len && is_digit(s[i])) {
		v += (s[i++] - '0') * scale;
		scale /= 10;
	}
	*ns = v;
	return i;
}

/* A timestamp at s[i]: HH:MM:SS[.frac] or SECONDS.frac; 0 if there is none. */
static size_t scan_timestamp(const char *s, size_t i, size_t len, struct line *out)
{
	int64_t a, b, c, frac = 0;
	size_t j = scan_number(s, i, len, &a);

	if (j == i || j >= len)
		return 0;
	if (s[j] == ':') {
		size_t k = scan_number(s, j + 1, len, &b);

		if (k == j + 1 || k >= len || s[k] != ':')
			return 0;
		j = scan_number(s, k + 1, len, &c);
		if (j == k + 1)
			return 0;
		if (j < len && s[j] == '.')
			j = scan_fraction(s, j + 1, len, &frac);
		if (a > 1000000 || b > 1000000 || c > 1000000)
			return 0;
		out->ts_ns = ((a * 60 + b) * 60 + c) * 1000000000LL + frac;
		out->ts_of_day = 1;
	} else if (s[j] == '.') {
		j = scan_fraction(s, j + 1, len, &frac);
		if (a > INT64_MAX / 1000000000LL - 1)
			return 0;
		out->ts_ns = a * 1000000000LL + frac;
		out->ts_of_day = 0;
	} else {
		return 0;
	}
	if (j < len && s[j] != ' ')
		return 0;
	return j;
}

static int starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(s, prefix, n) == 0;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* A syscall name: [a-z0-9_]+ followed by '('. */
static int looks_like_call(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && ((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i]) || s[i] == '_'))
		i++;
	return i > 0 && i < len && s[i] == '(';
}

void line_split(const char *s, size_t len, struct line *out)
{
	size_t i = 0, j;
	int64_t pid;

	memset(out, 0, sizeof(*out));
	out->pid = -1;
	out->ts_ns = -1;
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r'))
		len--;
	if (len == 0) {
		out->kind = LINE_BLANK;
		return;
	}
	if (memchr(s, '\0', len)) {
		out->kind = LINE_BAD;
		out->why = "binary data (a NUL byte), not strace text";
		return;
	}
	if (starts_with(s, len, "[pid ")) {
		j = scan_number(s, 5, len, &pid);
		if (j == 5 || j >= len || s[j] != ']') {
			out->kind = LINE_BAD;
			out->why = "'[pid N]' prefix not closed";
			return;
		}
		out->pid = (long)pid;
		i = skip_spaces(s, j + 1, len);
	} else if (is_digit(s[0])) {
		j = scan_number(s, 0, len, &pid);
		if (j < len && s[j] == ' ') {
			out->pid = (long)pid;
			i = skip_spaces(s, j, len);
		}
	}
	if (i < len && is_digit(s[i])) {
		j = scan_timestamp(s, i, len, out);
		if (j)
			i = skip_spaces(s, j, len);
	}
	out->body = s + i;
	out->body_len = len - i;
	s = out->body;
	len = out->body_len;
	if (starts_with(s, len, "--- ")) {
		out->kind = LINE_SIGNAL;
	} else if (starts_with(s, len, "+++ ")) {
		out->kind = LINE_EXIT;
	} else if (starts_with(s, len, "strace: ") || starts_with(s, len, "[ Process ")) {
		out->kind = LINE_INFO;
	} else if (starts_with(s, len, "<... ")) {
		out->kind = LINE_RESUMED;
	} else if (looks_like_call(s, len)) {
		out->kind = LINE_SYSCALL;
		if (ends_with(s, len, "<unfinished ...>")) {
			out->kind = LINE_UNFINISHED;
			out->marker_len = strlen("<unfinished ...>");
		} else if (ends_with(s, len, "<detached ...>")) {
			out->kind = LINE_UNFINISHED;
			out->marker_len = strlen("<detached ...>");
		} else if (ends_with(s, len, " attached") && memchr(s, '(', len)) {
			const char *open = memchr(s, '(', len);

			if ((size_t)(s + len - open) > 9 && memcmp(open + 1, "Process ", 8) == 0) {
				out->kind = LINE_UNFINISHED;
				out->marker_len = (size_t)(s + len - open) - 1;
				out->attached_midline = 1;
			}
		}
	} else {
		out->kind = LINE_BAD;
		out->why = "expected 'name(args) = result', a signal, an exit or a resumed call";
	}
}
