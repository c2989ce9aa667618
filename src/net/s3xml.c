/* s3xml.c - the XML of S3's answers, read without a parser (s3xml.h). */
#include "s3xml.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next element `name` in *s: its content in *in, and *s moves past its
 * end tag.  1 found, 0 not. */
int ow_s3_xml_next(struct ow_s3_span *s, const char *name, struct ow_s3_span *in)
{
	size_t nl = strlen(name);
	const char *p = s->p;
	while (p < s->end && (p = memchr(p, '<', (size_t)(s->end - p))) != NULL) {
		p++;
		if ((size_t)(s->end - p) <= nl || memcmp(p, name, nl) ||
		    (p[nl] != '>' && p[nl] != ' ' && p[nl] != '/'))
			continue;
		const char *gt = memchr(p + nl, '>', (size_t)(s->end - p - nl));
		if (!gt)
			return 0;
		if (gt[-1] == '/') { /* <Name/> */
			in->p = in->end = gt + 1;
			s->p = gt + 1;
			return 1;
		}
		char close[80];
		int cl = snprintf(close, sizeof close, "</%s>", name);
		const char *e = cl > 0 && (size_t)cl < sizeof close
		                ? memmem(gt + 1, (size_t)(s->end - gt - 1), close, (size_t)cl) : NULL;
		if (!e)
			return 0;
		in->p = gt + 1;
		in->end = e;
		s->p = e + cl;
		return 1;
	}
	return 0;
}

/* A character reference's code point as UTF-8 onto *o; 0, or -1 if invalid. */
static int put_utf8(char **o, unsigned long cp)
{
	unsigned char *u = (unsigned char *)*o;
	if (!cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	if (cp < 0x80) {
		*u++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*u++ = (unsigned char)(0xC0 | cp >> 6);
		*u++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*u++ = (unsigned char)(0xE0 | cp >> 12);
		*u++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		*u++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else {
		*u++ = (unsigned char)(0xF0 | cp >> 18);
		*u++ = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
		*u++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		*u++ = (unsigned char)(0x80 | (cp & 0x3F));
	}
	*o = (char *)u;
	return 0;
}

/* The text of `in`, entities decoded, malloc'd; NULL when it is not plain
 * text or out of memory.  A reference never decodes longer than it is
 * written ("&#65536;" is 8 bytes, its UTF-8 4), so len + 1 bytes suffice. */
char *ow_s3_xml_text(struct ow_s3_span in)
{
	static const struct { const char *name; char c; } ents[] = {
		{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''},
	};
	char *out = malloc((size_t)(in.end - in.p) + 1), *o = out;
	for (const char *p = in.p; out && p < in.end;) {
		if (*p == '<' || *p == '\0')
			goto bad;
		if (*p != '&') {
			*o++ = *p++;
			continue;
		}
		size_t left = (size_t)(in.end - p);
		const char *semi = memchr(p, ';', left < 12 ? left : 12);
		if (!semi)
			goto bad;
		size_t el = (size_t)(semi - p - 1);
		int done = 0;
		for (size_t i = 0; !done && i < sizeof ents / sizeof *ents; i++)
			if (strlen(ents[i].name) == el && !memcmp(p + 1, ents[i].name, el)) {
				*o++ = ents[i].c;
				done = 1;
			}
		if (!done && el >= 2 && p[1] == '#') {
			int hex = p[2] == 'x';
			char num[12], *end;
			size_t dl = el - 1 - (size_t)hex;
			memcpy(num, p + 2 + hex, dl);
			num[dl] = '\0';
			unsigned long cp = dl ? strtoul(num, &end, hex ? 16 : 10) : 0;
			done = dl && !*end && isxdigit((unsigned char)num[0]) && put_utf8(&o, cp) == 0;
		}
		if (!done)
			goto bad;
		p = semi + 1;
	}
	if (out)
		*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

/* The text of the first element `name` in s, or NULL. */
char *ow_s3_xml_child(struct ow_s3_span s, const char *name)
{
	struct ow_s3_span in;
	return ow_s3_xml_next(&s, name, &in) ? ow_s3_xml_text(in) : NULL;
}
