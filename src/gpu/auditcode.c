/* auditcode.c - the compact text of a fatbin listing kept in the index.
 *
 * Format 1, enough to recompute every verdict without the library:
 *
 *   owaudit N FORMAT HDR\n             N = OW_AUDIT_FORMAT, FORMAT = enum
 *                                      ow_fatbin_format, HDR "h" when the ELF
 *                                      had no section headers, "o" a
 *                                      relocatable object (ET_REL), "ho"
 *                                      both, else "-"
 *   RUN SECTION FLAGS ENTRY...\n       one line per run of equal modules
 *
 * RUN is how many consecutive modules share the line (libcublas: 193
 * modules, a few lines), SECTION the section name with bytes outside
 * '!'..'~' shown as '?', FLAGS "-" or letters r (relocatable) s (found by a
 * magic scan), ENTRY "KIND:ARCH[a|f]:MAJOR.MINOR:COMPRESSION" in decimal,
 * e.g. "2:120:12.8:2" (SASS sm_120, zstd) or "1:120a:9.0:0".  Offsets and
 * sizes are not kept.  The decoder is strict: the index is input too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "auditint.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

#define MAX_MODULES 1000000u
#define MAX_ENTRIES 10000000u
#define MAX_LINE_ENTRIES 4096u

static int same_entry(const struct ow_fatbin_entry *x, const struct ow_fatbin_entry *y)
{
	return x->kind == y->kind && x->arch == y->arch && x->variant == y->variant &&
	       x->ver_major == y->ver_major && x->ver_minor == y->ver_minor &&
	       x->compression == y->compression;
}

static int same_module(const struct ow_fatbin *fb, const struct ow_fatbin_module *a,
                       const struct ow_fatbin_module *b)
{
	if (a->relocatable != b->relocatable || a->scanned != b->scanned || a->count != b->count ||
	    a->no_kernels != b->no_kernels ||
	    strcmp(a->section, b->section) != 0)
		return 0;
	for (size_t i = 0; i < a->count; i++)
		if (!same_entry(&fb->entries[a->first + i], &fb->entries[b->first + i]))
			return 0;
	return 1;
}

static void put_section(struct ow_str *b, const char *name)
{
	char s[sizeof ((struct ow_fatbin_module *)0)->section];
	size_t n = 0;
	for (; name[n] && n < sizeof s - 1; n++)
		s[n] = name[n] > ' ' && name[n] <= '~' ? name[n] : '?';
	if (!n)
		s[n++] = '?';
	s[n] = 0;
	ow_str_printf(b, " %s", s);
}

static void put_entry(struct ow_str *b, const struct ow_fatbin_entry *e)
{
	char v[2] = {e->variant == 'a' || e->variant == 'f' ? e->variant : 0, 0};
	ow_str_printf(b, " %u:%u%s:%u.%u:%u", e->kind, e->arch, v, e->ver_major, e->ver_minor,
	              e->compression);
}

static void put_module(struct ow_str *b, const struct ow_fatbin *fb,
                       const struct ow_fatbin_module *m, size_t run)
{
	ow_str_printf(b, "%zu", run);
	put_section(b, m->section);
	ow_str_printf(b, " %s%s%s%s", m->relocatable ? "r" : "", m->scanned ? "s" : "",
	              m->no_kernels ? "k" : "",
	              m->relocatable || m->scanned || m->no_kernels ? "" : "-");
	for (size_t i = 0; i < m->count; i++)
		put_entry(b, &fb->entries[m->first + i]);
	ow_str_puts(b, "\n");
}

/* A SONAME kept in the listing: a file name's characters, one word.  Any
 * other (none seen) is left out: the library is then told by its name. */
static int soname_ok(const char *so)
{
	if (!so || !*so || strlen(so) > AU_SONAME_MAX)
		return 0;
	return strspn(so, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") ==
	       strlen(so);
}

int ow_audit_encode(const struct ow_fatbin *fb, char **out)
{
	struct ow_str b = {0};
	*out = NULL;
	ow_str_printf(&b, "owaudit %d %d %s%s%s%s\n", OW_AUDIT_FORMAT, fb->format,
	              fb->no_section_headers ? "h" : fb->object ? "" : "-", fb->object ? "o" : "",
	              soname_ok(fb->soname) ? " " : "", soname_ok(fb->soname) ? fb->soname : "");
	for (size_t i = 0; !b.err && i < fb->n_modules;) {
		size_t run = 1;
		while (i + run < fb->n_modules &&
		       same_module(fb, &fb->modules[i], &fb->modules[i + run]))
			run++;
		put_module(&b, fb, &fb->modules[i], run);
		i += run;
	}
	return ow_str_take(&b, out);
}

/* ---- decoding ------------------------------------------------------------- */

struct dec {
	const char *p, *end;
	size_t line;
	struct ow_fatbin *fb;
	size_t cap_m, cap_e;
};

static int bad(const struct dec *d, const char *why)
{
	return ow_err(OW_EPARSE, "cached audit listing, line %zu: %s — run 'offwheel audit "
	              "--no-cache' to read the object again", d->line, why);
}

/* A decimal number of at most `max`, then the byte `stop` (consumed; 0: none). */
static int num(struct dec *d, unsigned long max, char stop, unsigned long *v)
{
	const char *s = d->p;
	unsigned long n = 0;
	while (s < d->end && *s >= '0' && *s <= '9' && n <= max)
		n = n * 10 + (unsigned long)(*s++ - '0');
	if (s == d->p || n > max)
		return bad(d, "bad number");
	if (stop && (s == d->end || *s != stop))
		return bad(d, "unexpected character");
	d->p = s + (stop ? 1 : 0);
	*v = n;
	return 0;
}

static int word(struct dec *d, char *dst, size_t n)
{
	size_t i = 0;
	while (d->p < d->end && *d->p > ' ' && *d->p <= '~' && i < n - 1)
		dst[i++] = *d->p++;
	dst[i] = 0;
	if (!i || (d->p < d->end && *d->p > ' '))
		return bad(d, "bad word");
	return 0;
}

static int space(struct dec *d)
{
	if (d->p == d->end || *d->p != ' ')
		return bad(d, "space expected");
	d->p++;
	return 0;
}



static int entry(struct dec *d, struct ow_fatbin_entry *e)
{
	unsigned long kind, arch, maj, min, comp;
	memset(e, 0, sizeof *e);
	int rc = num(d, 0xFFFF, ':', &kind);
	if (!rc)
		rc = num(d, 0xFFFF, 0, &arch);
	if (!rc && d->p < d->end && (*d->p == 'a' || *d->p == 'f'))
		e->variant = *d->p++;
	if (!rc && (d->p == d->end || *d->p++ != ':'))
		rc = bad(d, "':' expected");
	if (!rc)
		rc = num(d, 0xFFFF, '.', &maj);
	if (!rc)
		rc = num(d, 0xFFFF, ':', &min);
	if (!rc)
		rc = num(d, OW_FB_COMP_UNKNOWN, 0, &comp);
	if (rc)
		return rc;
	e->kind = (uint16_t)kind;
	e->arch = (uint16_t)arch;
	e->ver_major = (uint16_t)maj;
	e->ver_minor = (uint16_t)min;
	e->compression = (uint8_t)comp;
	e->kernels = -1; /* not kept: the module's k flag says what the verdicts need */
	e->flags = (e->variant == 'a' ? OW_FB_FLAG_ARCH_A : 0) |
	           (e->variant == 'f' ? OW_FB_FLAG_FAMILY_F : 0) |
	           (comp == OW_FB_COMP_LZ4 ? OW_FB_FLAG_LZ4 : 0) |
	           (comp == OW_FB_COMP_ZSTD ? OW_FB_FLAG_ZSTD : 0) | OW_FB_FLAG_64BIT;
	return 0;
}

static int flags(struct dec *d, struct ow_fatbin_module *m)
{
	char f[4];
	int rc = word(d, f, sizeof f);
	if (rc || !strcmp(f, "-"))
		return rc;
	for (const char *c = f; *c; c++) {
		if (*c == 'r')
			m->relocatable = 1;
		else if (*c == 's')
			m->scanned = 1;
		else if (*c == 'k')
			m->no_kernels = 1;
		else
			return bad(d, "unknown module flag");
	}
	return 0;
}

/* The entries of one line, appended to fb->entries. */
static int line_entries(struct dec *d, size_t *count)
{
	struct ow_fatbin *fb = d->fb;
	*count = 0;
	while (d->p < d->end && *d->p == ' ') {
		d->p++;
		if (*count >= MAX_LINE_ENTRIES || fb->n_entries >= MAX_ENTRIES)
			return bad(d, "too many entries");
		struct ow_fatbin_entry *g =
			ow_array_reserve(fb->entries, &d->cap_e, fb->n_entries + 1, sizeof *g);
		if (!g)
			return ow_err(OW_ENOMEM, "audit listing: out of memory");
		fb->entries = g;
		int rc = entry(d, &fb->entries[fb->n_entries]);
		if (rc)
			return rc;
		fb->n_entries++;
		(*count)++;
	}
	if (d->p == d->end || *d->p != '\n')
		return bad(d, "end of line expected");
	d->p++;
	return 0;
}

/* Copies of the line's module for the rest of its run; entries are shared
 * by index (the same first/count). */
static int add_run(struct dec *d, const struct ow_fatbin_module *m, unsigned long run)
{
	struct ow_fatbin *fb = d->fb;
	if (run == 0 || run > MAX_MODULES - fb->n_modules)
		return bad(d, "bad module count");
	struct ow_fatbin_module *g =
		ow_array_reserve(fb->modules, &d->cap_m, fb->n_modules + run, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "audit listing: out of memory");
	fb->modules = g;
	for (unsigned long i = 0; i < run; i++)
		fb->modules[fb->n_modules++] = *m;
	return 0;
}

static int module_line(struct dec *d)
{
	struct ow_fatbin_module m = {0};
	unsigned long run;
	int rc = num(d, MAX_MODULES, ' ', &run);
	if (!rc)
		rc = word(d, m.section, sizeof m.section);
	if (!rc)
		rc = space(d);
	if (!rc)
		rc = flags(d, &m);
	m.first = d->fb->n_entries;
	if (!rc)
		rc = line_entries(d, &m.count);
	return rc ? rc : add_run(d, &m, run);
}

/* The end of the header line: " SONAME" (format 5) or nothing. */
static int header_soname(struct dec *d)
{
	const char *nl = memchr(d->p, '\n', (size_t)(d->end - d->p));
	if (!nl)
		return bad(d, "header line without an end");
	if (*d->p == ' ') {
		if (!(d->fb->soname = strndup(d->p + 1, (size_t)(nl - d->p - 1))))
			return ow_err(OW_ENOMEM, "audit listing: out of memory");
		if (!soname_ok(d->fb->soname))
			return bad(d, "bad SONAME");
	} else if (d->p != nl) {
		return bad(d, "bad listing flags");
	}
	d->p = nl + 1;
	return 0;
}

static int header(struct dec *d)
{
	static const char magic[] = "owaudit ";
	unsigned long ver, fmt;
	if ((size_t)(d->end - d->p) < sizeof magic - 1 || memcmp(d->p, magic, sizeof magic - 1))
		return bad(d, "not an audit listing");
	d->p += sizeof magic - 1;
	int rc = num(d, 1000, ' ', &ver);
	if (!rc && ver != OW_AUDIT_FORMAT)
		rc = bad(d, "unknown listing format");
	if (!rc)
		rc = num(d, OW_FB_FMT_LAST, ' ', &fmt);
	if (!rc)
		d->fb->format = (int)fmt;
	static const char *const flags[] = {"ho", "h", "o", "-"};
	size_t fl = 0;
	for (size_t i = 0; !rc && !fl && i < sizeof flags / sizeof *flags; i++)
		if ((size_t)(d->end - d->p) > strlen(flags[i]) &&
		    !memcmp(d->p, flags[i], strlen(flags[i])) && strchr(" \n", d->p[strlen(flags[i])]))
			fl = strlen(flags[i]);
	if (!rc && fl) {
		d->fb->no_section_headers = d->p[0] == 'h';
		d->fb->object = d->p[fl - 1] == 'o';
		d->p += fl;
	} else if (!rc) {
		rc = bad(d, "bad listing flags");
	}
	return rc ? rc : header_soname(d);
}

int ow_audit_decode(const char *text, size_t len, struct ow_fatbin **out)
{
	struct dec d = {.p = text, .end = text + len, .line = 1};
	*out = NULL;
	if (!(d.fb = calloc(1, sizeof *d.fb)))
		return ow_err(OW_ENOMEM, "audit listing: out of memory");
	int rc = header(&d);
	while (!rc && d.p < d.end) {
		d.line++;
		rc = module_line(&d);
	}
	if (rc) {
		ow_fatbin_free(d.fb);
		return rc;
	}
	*out = d.fb;
	return 0;
}
