/* resolverender.c - a conflict's causes (include/offwheel/resolve.h, struct
 * ow_cause) said as the sentence a person reads: "no version of a fits: a
 * 1.0 requires b<2, but b 2.0 is chosen; ...".  The backtracker collects the
 * causes; this file is the only one that words them, whole (no text cut). */
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "offwheel/resolve.h"
#include "offwheel/str.h"

static const char *const kind_names[] = {
	[OW_CAUSE_NO_FIT] = "no-fit",       [OW_CAUSE_NO_MATCH] = "no-match",
	[OW_CAUSE_NO_VERSIONS] = "no-versions", [OW_CAUSE_NO_PAGE] = "no-page",
	[OW_CAUSE_METADATA] = "metadata",   [OW_CAUSE_REQUIRES] = "requires",
	[OW_CAUSE_LIMITS] = "limits",       [OW_CAUSE_CHOSEN] = "chosen",
	[OW_CAUSE_AVAILABLE] = "available", [OW_CAUSE_UNUSABLE] = "unusable",
	[OW_CAUSE_WITH] = "with",           [OW_CAUSE_MORE] = "more",
	[OW_CAUSE_YANKED] = "yanked",       [OW_CAUSE_UNFIT] = "unfit",
};

const char *ow_cause_kind_name(enum ow_cause_kind k)
{
	return (size_t)k < sizeof kind_names / sizeof kind_names[0] && kind_names[k]
	               ? kind_names[k]
	               : "?";
}

static const char *txt(const char *s)
{
	return s ? s : "";
}

/* "BY requires P<2" / "BY limits P<2". */
static void crit_phrase(const struct ow_cause *c, struct ow_str *s)
{
	ow_str_printf(s, "%s %s %s%s", txt(c->by),
	              c->kind == OW_CAUSE_LIMITS ? "limits" : "requires", txt(c->project),
	              txt(c->spec));
}

static bool is_crit(const struct ow_cause *c)
{
	return c->kind == OW_CAUSE_REQUIRES || c->kind == OW_CAUSE_LIMITS;
}

/* What follows the failed requirement of a reason: what it met. */
static void reason_rest(const struct ow_cause *c, bool *counter, struct ow_str *s)
{
	switch (c->kind) {
	case OW_CAUSE_CHOSEN:
		ow_str_printf(s, ", but %s %s is chosen", txt(c->project), txt(c->spec));
		break;
	case OW_CAUSE_REQUIRES:
	case OW_CAUSE_LIMITS:
		ow_str_puts(s, *counter ? " and " : ", but ");
		*counter = true;
		crit_phrase(c, s);
		break;
	case OW_CAUSE_AVAILABLE:
		ow_str_printf(s, ", but only %s %s %s available for this target", txt(c->project),
		              txt(c->spec), c->count > 1 ? "are" : "is");
		break;
	case OW_CAUSE_NO_VERSIONS:
		ow_str_puts(s, ", which has no version for this target");
		break;
	case OW_CAUSE_UNFIT:
		ow_str_printf(s, "; %s", txt(c->detail));
		break;
	default:
		break;
	}
}

/* What is said of the conflict as a whole after its head. */
static void whole_rest(const struct ow_cause *c, size_t *crits, struct ow_str *s)
{
	if (is_crit(c)) {
		ow_str_puts(s, (*crits)++ ? "; " : "");
		crit_phrase(c, s);
	} else if (c->kind == OW_CAUSE_MORE) {
		ow_str_printf(s, "; %zu more versions fail the same way", c->count);
	} else if (c->kind == OW_CAUSE_YANKED) {
		ow_str_printf(s, "; %s %s is yanked: only an exact == pin takes it", txt(c->project),
		              txt(c->spec));
	} else if (c->kind == OW_CAUSE_UNFIT) {
		ow_str_printf(s, "; %s", txt(c->detail));
	}
}

/* The head of a conflict; false when it is the whole of it. */
static bool head(const struct ow_cause *c, struct ow_str *s)
{
	switch (c->kind) {
	case OW_CAUSE_NO_PAGE:
		ow_str_printf(s, "%s (required by %s): %s", txt(c->project), txt(c->by),
		              txt(c->detail));
		return false;
	case OW_CAUSE_METADATA:
		if (c->spec)
			ow_str_printf(s, "%s: its metadata cannot be used: Requires-Dist '%s': %s",
			              txt(c->by), c->spec, txt(c->detail));
		else
			ow_str_puts(s, txt(c->detail));
		return false;
	case OW_CAUSE_NO_FIT:
		ow_str_printf(s, "no version of %s fits: ", txt(c->project));
		return true;
	case OW_CAUSE_NO_MATCH:
		ow_str_printf(s, "no version of %s meets every requirement: ", txt(c->project));
		return true;
	case OW_CAUSE_NO_VERSIONS:
		ow_str_printf(s, "no version of %s is available for this target: ", txt(c->project));
		return true;
	default:
		return true;
	}
}

static void render_conflict(const struct ow_cause *c, size_t n, size_t *i, struct ow_str *s);

/* The lead of reason c[*i] (the requirement that failed, an unusable
 * candidate, a decision with the conflict under it). */
static void reason_lead(const struct ow_cause *c, size_t n, size_t *i, struct ow_str *s)
{
	const struct ow_cause *l = &c[*i];
	(*i)++;
	if (l->kind == OW_CAUSE_UNUSABLE) {
		ow_str_printf(s, "%s %s: %s", txt(l->project), txt(l->spec), txt(l->detail));
	} else if (l->kind == OW_CAUSE_WITH) {
		ow_str_printf(s, "with %s %s: ", txt(l->project), txt(l->spec));
		if (*i < n && c[*i].depth > l->depth)
			render_conflict(c, n, i, s);
		else
			ow_str_puts(s, "a conflict further down (not kept)");
	} else if (is_crit(l)) {
		crit_phrase(l, s);
	}
}

static void render_conflict(const struct ow_cause *c, size_t n, size_t *i, struct ow_str *s)
{
	unsigned d = c[*i].depth, reason = 0;
	size_t crits = 0, reasons = 0;
	bool counter = false;
	if (!head(&c[(*i)++], s))
		return;
	while (*i < n && c[*i].depth >= d) {
		const struct ow_cause *k = &c[*i];
		if (k->depth > d) { /* below a lead that is not a `with`: not said */
			(*i)++;
		} else if (k->reason && k->reason != reason) {
			ow_str_puts(s, reasons++ ? "; " : "");
			reason = k->reason;
			counter = false;
			reason_lead(c, n, i, s);
		} else {
			if (k->reason)
				reason_rest(k, &counter, s);
			else
				whole_rest(k, &crits, s);
			(*i)++;
		}
	}
}

int ow_causes_render(const struct ow_cause *c, size_t n, char **out)
{
	struct ow_str s = {0};
	*out = NULL;
	for (size_t i = 0; i < n;) {
		ow_str_puts(&s, i ? "; " : "");
		render_conflict(c, n, &i, &s);
	}
	ow_str_puts(&s, "");
	return ow_str_take(&s, out);
}

static int dup_or_null(const char *s, char **out)
{
	*out = s ? strdup(s) : NULL;
	return !s || *out ? 0 : ow_err(OW_ENOMEM, "resolve: out of memory");
}

int ow_causes_copy(const struct ow_cause *c, size_t n, struct ow_cause **out)
{
	*out = NULL;
	if (!n)
		return 0;
	struct ow_cause *v = calloc(n, sizeof *v);
	int rc = v ? 0 : ow_err(OW_ENOMEM, "resolve: out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		v[i] = (struct ow_cause){.kind = c[i].kind, .count = c[i].count,
		                         .depth = c[i].depth, .reason = c[i].reason};
		if ((rc = dup_or_null(c[i].project, &v[i].project)) == 0 &&
		    (rc = dup_or_null(c[i].spec, &v[i].spec)) == 0 &&
		    (rc = dup_or_null(c[i].by, &v[i].by)) == 0)
			rc = dup_or_null(c[i].detail, &v[i].detail);
	}
	if (rc < 0) {
		ow_causes_free(v, n);
		return rc;
	}
	*out = v;
	return 0;
}

void ow_causes_free(struct ow_cause *c, size_t n)
{
	if (!c)
		return;
	for (size_t i = 0; i < n; i++) {
		free(c[i].project);
		free(c[i].spec);
		free(c[i].by);
		free(c[i].detail);
	}
	free(c);
}
