/* clitext.c - JSON strings from arbitrary bytes, names safe on a terminal. */
#include "clitext.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t cli_utf8_seq(const unsigned char *s)
{
	uint32_t cp;
	size_t n;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static uint32_t decode(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = s[0] & lead_mask[n];
	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

json_t *cli_json_bytes(const char *s, int *replaced)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p);
	char *buf = malloc(len * 3 + 1); /* one byte -> U+FFFD at most triples */
	size_t o = 0;
	int rep = 0;
	if (!buf)
		return NULL;
	while (*p) {
		size_t n = cli_utf8_seq(p);
		if (n) {
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			rep = 1;
		}
	}
	buf[o] = '\0';
	json_t *j = json_stringn(buf, o);
	free(buf);
	if (replaced)
		*replaced = rep;
	return j;
}

static char *base64(const unsigned char *d, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
		             (i + 2 < n ? d[i + 2] : 0);
		*o++ = a[v >> 18 & 63];
		*o++ = a[v >> 12 & 63];
		*o++ = i + 1 < n ? a[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? a[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

int cli_json_set_bytes(json_t *obj, const char *key, const char *bytes)
{
	int replaced = 0;
	json_t *v = cli_json_bytes(bytes, &replaced);
	if (!v || json_object_set_new(obj, key, v))
		return -1;
	if (!replaced)
		return 0;
	char k[128], *b = base64((const unsigned char *)bytes, strlen(bytes));
	snprintf(k, sizeof k, "%s_base64", key);
	int rc = b ? json_object_set_new(obj, k, json_string(b)) : -1;
	free(b);
	return rc;
}

/* Shown as \u{XXXX}: C1 controls, bidi embeddings/overrides/isolates, the
 * line and paragraph separators, BOM (a terminal or an editor acts on them). */
static int is_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0x200e ||
	       cp == 0x200f || cp == 0x061c || cp == 0xfeff;
}

static const char *printable(const char *s, char *buf, size_t n, int backslash)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0;
	if (!n)
		return buf;
	while (*p) {
		char piece[16];
		size_t k = cli_utf8_seq(p), w;
		if (k == 1 && *p >= 0x20 && *p != 0x7f && (*p != '\\' || !backslash)) {
			piece[0] = (char)*p;
			w = 1;
		} else if (k == 1 && *p == '\\' && backslash) {
			memcpy(piece, "\\\\", 2);
			w = 2;
		} else if (k == 1 || k == 0) {
			w = (size_t)snprintf(piece, sizeof piece, "\\x%02x", *p);
			k = 1;
		} else if (is_hidden(decode(p, k))) {
			w = (size_t)snprintf(piece, sizeof piece, "\\u{%04x}", (unsigned)decode(p, k));
		} else {
			memcpy(piece, p, k);
			w = k;
		}
		if (o + w + 4 > n) { /* room for "..." and the NUL */
			snprintf(buf + o, n - o, "...");
			return buf;
		}
		memcpy(buf + o, piece, w);
		o += w;
		p += k;
	}
	buf[o] = '\0';
	return buf;
}

const char *cli_printable(const char *s, char *buf, size_t n)
{
	return printable(s, buf, n, 1);
}

static char *dup_with(const char *s, int backslash)
{
	size_t n = CLI_PRINTABLE_SIZE(strlen(s ? s : ""));
	char *buf = malloc(n);
	if (buf)
		printable(s, buf, n, backslash);
	return buf;
}

char *cli_printable_dup(const char *s) { return dup_with(s, 1); }
char *cli_terminal_dup(const char *s) { return dup_with(s, 0); }
