/* interrupt.h - SIGINT / SIGTERM during downloads (interrupt.c). */
#ifndef OW_CLI_INTERRUPT_H
#define OW_CLI_INTERRUPT_H

#include "cli.h"
#include "offwheel/fetch.h"

/* Catch SIGINT and SIGTERM from now on: the first stops the downloads
 * (a second one ends the process); disarm restores what was before. */
void cli_interrupt_arm(void);
void cli_interrupt_disarm(void);
/* Clear progress, list the files `r` stored, say "interrupted — re-run to
 * resume" on stderr; the exit code of OW_EINTERRUPTED (128 + the signal). */
int cli_interrupt_report(const struct cli *c, const struct ow_fetch_report *r);
/* Only the "interrupted — re-run to resume" line; the exit code. */
int cli_interrupt_say(const struct cli *c);
/* An interrupt that ends a command before it has a report: the line, or
 * with --json the one error document (code EINTERRUPTED); the exit code. */
int cli_interrupt_fail(struct cli *c);

#endif
