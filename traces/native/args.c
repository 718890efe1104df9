/*
 * args.c - a small scanner for strace's argument syntax: quotes with backslash escapes,
 * nested (), [] and {}, and -y annotations such as 3</path> or 4<socket:[123]>.
 */
#include "args.h"

#include <stdio.h>
#include <string.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * One argument, without the spaces at its end: a call strace left unfinished is glued to
 * its resumed half, and the space before "<unfinished ...>" (or after "resumed>", as older
 * strace writes it) would otherwise end the last argument: "write(3, "c", 7 ) = 7".
 */
static void add_arg(struct call *c, const char *p, size_t len)
{
	while (len > 0 && p[len - 1] == ' ')
		len--;
	if (c->nargs < MAX_ARGS)
		c->arg[c->nargs++] = (struct span){ p, len };
}

/*
 * Index of the parenthesis closing the one before s[0], or len if there is none.  Also
 * splits the top-level arguments on ", " as it goes.
 */
static size_t scan_args(const char *s, size_t len, struct call *c)
{
	int depth = 0, in_quote = 0, in_angle = 0;
	size_t start = 0;

	c->nargs = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (in_quote) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_quote = 0;
			continue;
		}
		if (in_angle) {
			if (ch == '>')
				in_angle = 0;
			continue;
		}
		switch (ch) {
		case '"': in_quote = 1; break;
		case '<': in_angle = i > 0 && is_digit(s[i - 1]); break;
		case '(': case '[': case '{': depth++; break;
		case ']': case '}': depth--; break;
		case ')':
			if (depth == 0) {
				if (i > start)
					add_arg(c, s + start, i - start);
				return i;
			}
			depth--;
			break;
		case ',':
			if (depth == 0) {
				add_arg(c, s + start, i - start);
				start = i + 1;
				while (start < len && s[start] == ' ')
					start++;
			}
			break;
		default: break;
		}
	}
	return len;
}

/* " <0.000123>" at the end of the line (strace -T). */
static void scan_duration(const char *s, size_t len, struct call *c)
{
	size_t i;
	int64_t secs = 0, frac = 0, scale = 100000000;

	c->dur_ns = -1;
	if (len < 4 || s[len - 1] != '>')
		return;
	i = len - 1;
	while (i > 0 && s[i - 1] != '<')
		i--;
	if (i == 0 || i < 2 || s[i - 2] != ' ')
		return;
	for (; i < len - 1 && is_digit(s[i]); i++)
		secs = secs < INT64_MAX / 1000000000LL / 10 ? secs * 10 + (s[i] - '0') : INT64_MAX / 1000000000LL / 10;
	if (i >= len - 1 || s[i] != '.')
		return;
	for (i++; i < len - 1 && is_digit(s[i]); i++) {
		frac += (s[i] - '0') * scale;
		scale /= 10;
	}
	if (i == len - 1)
		c->dur_ns = secs * 1000000000LL + frac;
}

int span_int(struct span s, int64_t *v)
{
	size_t i = 0;
	int neg = 0, overflowed = 0;
	uint64_t n = 0;

	if (s.len > 0 && s.p[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i + 2 < s.len + 1 && s.len - i > 2 && s.p[i] == '0' && (s.p[i + 1] == 'x' || s.p[i + 1] == 'X')) {
		size_t start = i += 2;

		for (; i < s.len; i++) {
			char ch = s.p[i];
			int d = is_digit(ch) ? ch - '0' : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10 :
				(ch >= 'A' && ch <= 'F') ? ch - 'A' + 10 : -1;

			if (d < 0)
				break;
			overflowed |= n > (UINT64_MAX >> 4);
			n = n * 16 + (uint64_t)d;
		}
		if (i == start)
			return -1;
	} else {
		size_t start = i;

		for (; i < s.len && is_digit(s.p[i]); i++) {
			overflowed |= n > (UINT64_MAX - 9) / 10;
			n = n * 10 + (uint64_t)(s.p[i] - '0');
		}
		if (i == start)
			return -1;
	}
	if (i != s.len && s.p[i] != '<')
		return -1;
	if (overflowed || n > (uint64_t)INT64_MAX) /* INT64_MIN itself is the table's "no value" */
		return -1;
	*v = neg ? -(int64_t)n : (int64_t)n;
	return 0;
}

int call_parse(const char *s, size_t len, struct call *c, const char **why)
{
	const char *paren = memchr(s, '(', len);
	size_t open, close, i;

	memset(c, 0, sizeof(*c));
	c->dur_ns = -1;
	if (!paren) {
		*why = "expected 'name(' at the start of a call";
		return -1;
	}
	open = (size_t)(paren - s);
	c->name = (struct span){ s, open };
	close = open + 1 + scan_args(s + open + 1, len - open - 1, c);
	if (close >= len) {
		*why = "the argument list is not closed (a line cut short?)";
		return -1;
	}
	c->args = (struct span){ s + open + 1, close - open - 1 };
	for (i = close + 1; i < len && s[i] == ' '; i++)
		;
	if (i >= len || s[i] != '=') {
		*why = "expected '= result' after the arguments";
		return -1;
	}
	for (i++; i < len && s[i] == ' '; i++)
		;
	if (i < len && s[i] == '?') {
		c->ret_known = 0;
		i++;
	} else {
		size_t start = i;

		if (i < len && s[i] == '-')
			i++;
		while (i < len && (is_digit(s[i]) || s[i] == 'x' || (s[i] >= 'a' && s[i] <= 'f') ||
				   (s[i] >= 'A' && s[i] <= 'F')))
			i++;
		if (span_int((struct span){ s + start, i - start }, &c->ret) != 0) {
			*why = "expected a number or '?' as the result";
			return -1;
		}
		c->ret_known = 1;
		if (i < len && s[i] == '<') {
			size_t p = i + 1;

			while (i < len && s[i] != '>')
				i++;
			c->ret_path = (struct span){ s + p, i - p };
			if (i < len)
				i++;
		}
	}
	while (i < len && s[i] == ' ')
		i++;
	if (i + 1 < len && s[i] == 'E' && s[i + 1] >= 'A' && s[i + 1] <= 'Z') {
		size_t k = 0;

		while (i < len && k < ERRNO_MAX - 1 && ((s[i] >= 'A' && s[i] <= 'Z') || is_digit(s[i]) || s[i] == '_'))
			c->err[k++] = s[i++];
		c->err[k] = '\0';
	}
	scan_duration(s, len, c);
	return 0;
}

int span_eq(struct span s, const char *text)
{
	size_t n = strlen(text);

	return s.len == n && memcmp(s.p, text, n) == 0;
}

int span_fd(struct span s, int64_t *fd, struct span *path)
{
	*path = (struct span){ NULL, 0 };
	if (s.len >= 8 && memcmp(s.p, "AT_FDCWD", 8) == 0) {
		*fd = -100;
		if (s.len > 10 && s.p[8] == '<' && s.p[s.len - 1] == '>')
			*path = (struct span){ s.p + 9, s.len - 10 }; /* -y: AT_FDCWD</cwd> */
		return s.len == 8 || s.p[8] == '<' ? 0 : -1;
	}
	if (span_int(s, fd) != 0)
		return -1;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] == '<' && s.p[s.len - 1] == '>') {
			*path = (struct span){ s.p + i + 1, s.len - i - 2 };
			break;
		}
	}
	return 0;
}

static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Append one decoded byte: printable ASCII as itself (but '\'), anything else as \xNN. */
static size_t put_byte(char *out, size_t k, size_t cap, unsigned char b)
{
	if (b >= 0x20 && b < 0x7f && b != '\\') {
		if (k + 1 < cap)
			out[k++] = (char)b;
	} else if (k + 4 < cap) {
		k += (size_t)snprintf(out + k, cap - k, "\\x%02x", b);
	}
	return k;
}

int span_string(struct span s, char *out, size_t cap)
{
	size_t k = 0, i;

	if (s.len < 2 || s.p[0] != '"')
		return -1;
	for (i = 1; i < s.len && s.p[i] != '"'; i++) {
		unsigned char b = (unsigned char)s.p[i];

		if (b == '\\' && i + 1 < s.len) {
			char e = s.p[++i];

			switch (e) {
			case 'n': b = '\n'; break;
			case 't': b = '\t'; break;
			case 'r': b = '\r'; break;
			case 'v': b = '\v'; break;
			case 'f': b = '\f'; break;
			case 'x':
				if (i + 2 < s.len && hex_value(s.p[i + 1]) >= 0 && hex_value(s.p[i + 2]) >= 0) {
					b = (unsigned char)(hex_value(s.p[i + 1]) * 16 + hex_value(s.p[i + 2]));
					i += 2;
				}
				break;
			default:
				if (e >= '0' && e <= '7') {
					int v = e - '0', n = 1;

					while (n < 3 && i + 1 < s.len && s.p[i + 1] >= '0' && s.p[i + 1] <= '7') {
						v = v * 8 + (s.p[++i] - '0');
						n++;
					}
					b = (unsigned char)v;
				} else {
					b = (unsigned char)e;
				}
			}
		}
		k = put_byte(out, k, cap, b);
	}
	out[k < cap ? k : cap - 1] = '\0';
	return i < s.len ? 0 : -1;
}

int span_has(struct span s, const char *word)
{
	size_t n = strlen(word);

	for (size_t i = 0; i + n <= s.len; i++)
		if (memcmp(s.p + i, word, n) == 0)
			return 1;
	return 0;
}

int64_t span_iov_total(struct span s)
{
	static const char key[] = "iov_len=";
	int64_t total = 0;

	for (size_t i = 0; i + sizeof(key) - 1 < s.len; i++) {
		if (memcmp(s.p + i, key, sizeof(key) - 1) == 0) {
			size_t j = i + sizeof(key) - 1;
			int64_t v = 0;

			while (j < s.len && is_digit(s.p[j])) {
				v = v < INT64_MAX / 100 ? v * 10 + (s.p[j] - '0') : INT64_MAX / 100;
				j++;
			}
			total = total < INT64_MAX / 2 ? total + v : total;
			i = j;
		}
	}
	return total;
}
