/* auditagain.c - wheel members listed again after a streamed listing missed
 * bytes it did not keep (docs/fatbin.md, "Auditing a wheel in bounded
 * memory"): the next pass streams the member again keeping the missed
 * ranges too, and only a member whose miss has no range (a kernel decision
 * for a container over 64 MiB), or that missed more ranges than a stream
 * takes, is held whole. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "auditint.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

#define RANGE_MAX (64ull << 20) /* a bigger missed range: held whole instead */

const struct au_again *au_again_find(const struct au_again_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

/* The range sp missed is new, small enough and one more fits. */
static int can_keep(const struct au_again *ag, const struct fb_sparse *sp)
{
	if (!sp->miss_len || sp->miss_len > RANGE_MAX || ag->n >= FB_STREAM_WANTS)
		return 0;
	for (int i = 0; i < ag->n; i++)
		if (ag->off[i] == sp->miss_off && ag->len[i] == sp->miss_len)
			return 0; /* asked for already, and still missed: no use asking again */
	return 1;
}

int au_again_push(struct au_again_list *next, const char *name, const struct au_again *prev,
                  const struct fb_sparse *sp, const char *why)
{
	struct au_again ag = {0};
	if (prev) {
		ag = *prev;
		ag.name = NULL;
		ag.why = NULL;
	}
	ag.passes++;
	if (can_keep(&ag, sp)) {
		ag.off[ag.n] = sp->miss_off;
		ag.len[ag.n++] = sp->miss_len;
	} else {
		ag.whole = 1;
	}
	struct au_again *v = ow_array_more(next->v, next->n, sizeof *v);
	if (v)
		next->v = v;
	if (!v || !(ag.name = strdup(name)) || !(ag.why = strdup(prev ? prev->why : why))) {
		free(ag.name);
		return ow_err(OW_ENOMEM, "audit: out of memory");
	}
	next->v[next->n++] = ag;
	return 0;
}

void au_again_free(struct au_again_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].why);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

char *au_again_note(const struct au_again *ag)
{
	uint64_t kept = 0;
	for (int i = 0; i < ag->n; i++)
		kept += ag->len[i];
	if (ag->whole)
		return ow_aprintf("inflated %d times, the last held whole (%s)", ag->passes + 1,
		                  ag->why);
	return ow_aprintf("inflated %d times (%s); the later passes streamed it again keeping "
	                  "%d more byte range%s (%" PRIu64 " bytes), never the whole member",
	                  ag->passes + 1, ag->why, ag->n, ag->n == 1 ? "" : "s", kept);
}
