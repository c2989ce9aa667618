/* wrap.h - the one routine that fits text to a terminal: every message,
 * listing row, matrix line and summary the CLI prints goes through it
 * (cli_say, cli_out, cli_wrapped, cli_usage_error, the help).  On a
 * terminal a line wider than the screen is broken at spaces, never inside
 * a word, and its continuation lines are indented; in a pipe or a file the
 * text is written as it is, one line per line (greppable). */
#ifndef OW_CLI_WRAP_H
#define OW_CLI_WRAP_H

#include <stdio.h>

#include "offwheel/error.h"

/* The columns `f` is wrapped to: its terminal's width, 0 when it is not a
 * terminal (no wrapping). */
int cli_wrap_width(FILE *f);
/* Write `text` (any number of lines; the last may be unfinished, the next
 * call goes on with it) to `f`, wrapped to its terminal.  A continuation
 * line starts under the column that follows the line's last run of two or
 * more spaces before the break (a table's column, "[pass] driver   ...")
 * when that lies in the left half of the screen, else 4 columns right of
 * the line's own indent; a word too long for that indent (a path) starts at
 * column 4.  A word longer than a line (a URL, a path) is never cut: it
 * goes on a line of its own when that helps, else it runs past the edge.  Spaces before a break and at a line's end are dropped. */
void cli_wrap(FILE *f, const char *text);
/* cli_wrap of a formatted text. */
void cli_wrapf(FILE *f, const char *fmt, ...) OW_PRINTF(2, 3);
/* A shell command line (or lines) for pasting, as cli_wrap but each break
 * ends its line with " \\", so that the pasted lines are one command. */
void cli_wrap_command(FILE *f, const char *line);
/* The help's form: `text` from column `col` on (what is left of it was
 * written already), wrapped to `width` whether or not `f` is a terminal,
 * continuation lines at `indent`; ends the line. */
void cli_wrap_at(FILE *f, const char *text, int col, int indent, int width);
/* Forget where the line on `f` stands (something else wrote to it). */
void cli_wrap_reset(FILE *f);

#endif
