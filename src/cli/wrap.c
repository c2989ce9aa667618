/* wrap.c - text fitted to the terminal at word boundaries (wrap.h). */
#include "wrap.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Where the current line of a stream stands, kept between calls (a line is
 * often printed in pieces). */
struct wline {
	int col;     /* columns written on the line */
	int lead;    /* its indent: the spaces it starts with */
	int gap;     /* the column after its last run of 2+ spaces, 0: none */
	int words;   /* words written after the indent */
	int spaces;  /* spaces seen and not written yet */
	int hang;    /* a fixed continuation indent (the help's), or -1 */
	const char *mark; /* written before a break (" \\" in a shell command) */
};

static struct wline w_out = {.hang = -1}, w_err = {.hang = -1};

static struct wline *line_of(FILE *f)
{
	return f == stderr ? &w_err : &w_out;
}

int cli_wrap_width(FILE *f)
{
	int fd = fileno(f);
	return fd >= 0 && isatty(fd) ? cli_columns(fd, 80) : 0;
}

void cli_wrap_reset(FILE *f)
{
	*line_of(f) = (struct wline){.hang = -1};
}

/* Columns of n bytes of UTF-8 text (continuation bytes take none). */
static int text_cols(const char *s, size_t n)
{
	int w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xC0) != 0x80;
	return w;
}

/* The indent of the line that continues this one. */
static int hang_of(const struct wline *l, int width)
{
	if (l->hang >= 0)
		return l->hang;
	if (l->gap > l->lead && l->gap <= width / 2)
		return l->gap;
	return l->lead + 4 <= width / 2 ? l->lead + 4 : 4;
}

/* One word of n bytes (w columns) onto the line: after the spaces owed, or
 * on a new line when it would pass the edge there and fits the next. */
static void put_word(FILE *f, struct wline *l, const char *p, size_t n, int width)
{
	int w = text_cols(p, n), hang = hang_of(l, width);
	int room = width - (l->mark ? text_cols(l->mark, strlen(l->mark)) : 0);
	if (hang > 4 && hang + w > room) /* a long word (a path) takes a line from column 4 */
		hang = 4;
	if (l->words && l->col + l->spaces + w > room && hang + w <= room) {
		fprintf(f, "%s\n%*s", l->mark ? l->mark : "", hang, "");
		l->col = hang;
	} else if (l->spaces) {
		if (l->spaces >= 2 && l->col > 0)
			l->gap = l->col + l->spaces;
		fprintf(f, "%*s", l->spaces, "");
		l->col += l->spaces;
	}
	l->spaces = 0;
	fwrite(p, 1, n, f);
	l->col += w;
	l->words++;
}

static void wrap_to(FILE *f, struct wline *l, const char *text, int width)
{
	for (const char *p = text; *p;) {
		if (*p == '\n') {
			fputc('\n', f);
			*l = (struct wline){.hang = l->hang, .mark = l->mark};
			p++;
		} else if (*p == ' ') {
			size_t n = strspn(p, " ");
			if (!l->words && l->col + l->spaces == l->lead) /* still the indent */
				l->lead += (int)n;
			l->spaces += (int)n;
			p += n;
		} else {
			size_t n = strcspn(p, " \n");
			put_word(f, l, p, n, width);
			p += n;
		}
	}
}

void cli_wrap(FILE *f, const char *text)
{
	int width = cli_wrap_width(f);
	if (!width) {
		fputs(text, f);
		return;
	}
	wrap_to(f, line_of(f), text, width);
}

void cli_wrapf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	cli_wrap(f, n < 0 ? "(out of memory)\n" : s);
	free(n < 0 ? NULL : s);
}

void cli_wrap_at(FILE *f, const char *text, int col, int indent, int width)
{
	struct wline l = {.col = col, .lead = col, .hang = indent};
	wrap_to(f, &l, text, width);
	fputc('\n', f);
	cli_wrap_reset(f);
}

void cli_wrap_command(FILE *f, const char *line)
{
	struct wline *l = line_of(f);
	l->mark = " \\";
	cli_wrap(f, line);
	l->mark = NULL;
}

void cli_wrapped(FILE *f, const char *prefix, const char *msg)
{
	cli_progress_clear();
	cli_wrap(f, prefix);
	cli_wrap(f, msg ? msg : "");
	cli_wrap(f, "\n");
}
