/* interrupt.c - Ctrl-C (SIGINT) or SIGTERM while fetch, sync or resolve work
 * (crawl, metadata, downloads):
 * the handler records the signal (ow_interrupt, error.h: the one flag, safe
 * in a signal handler); every running transfer ends with OW_EINTERRUPTED and
 * its partial bytes kept for the next run, nothing unverified is stored, the
 * library returns OW_EINTERRUPTED, and the command says what finished
 * before it exits with that code's exit status from the error table
 * (128 + the signal: 130 for Ctrl-C, 143 for SIGTERM). */
#include "interrupt.h"

#include <signal.h>
#include <string.h>

#include "offwheel/error.h"
#include "render.h"

static struct sigaction old_int, old_term;
static int armed;

static void on_signal(int sig)
{
	ow_interrupt(sig);
}

void cli_interrupt_arm(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* once: a second Ctrl-C ends the process at once, as it would have */
	sa.sa_flags = (int)SA_RESETHAND;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	armed = 1;
}

void cli_interrupt_disarm(void)
{
	if (!armed)
		return;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	armed = 0;
}

int cli_interrupt_report(const struct cli *c, const struct ow_fetch_report *r)
{
	size_t stored = 0;
	cli_progress_clear();
	for (size_t i = 0; i < r->n; i++)
		stored += r->items[i].outcome == OW_FETCH_DONE;
	if (stored)
		cli_say(c, "finished before the interrupt (%zu of %zu, stored and verified):\n", stored,
		        r->n);
	for (size_t i = 0; i < r->n; i++)
		if (r->items[i].outcome == OW_FETCH_DONE)
			cli_fetch_item_text(c, &r->items[i]);
	return cli_interrupt_say(c);
}

int cli_interrupt_say(const struct cli *c)
{
	char prefix[64];
	cli_progress_clear();
	fflush(stdout);
	snprintf(prefix, sizeof prefix, "offwheel %s: ", c->cmd ? c->cmd : "fetch");
	cli_wrapped(stderr, prefix, "interrupted — re-run to resume (what finished is stored; "
	                            "partial downloads are kept and continued by the next run)");
	return ow_err_exit_code(OW_EINTERRUPTED);
}

int cli_interrupt_fail(struct cli *c)
{
	if (!c->json)
		return cli_interrupt_say(c);
	cli_fail(c, ow_err(OW_EINTERRUPTED, "interrupted — re-run to resume"));
	return ow_err_exit_code(OW_EINTERRUPTED);
}
