/* toml.h - a TOML 1.0 reader for what offwheel reads from pyproject.toml
 * (not a public API).  Pure: text in, a tree out, so it can be fuzzed.
 *
 * The whole of TOML 1.0's syntax is read and checked — every string form
 * with its escapes, arrays over lines, inline tables, [tables] and
 * [[arrays of tables]], dotted and quoted keys, and the rules against
 * defining a key or a table twice — so that a document Python's tomllib
 * refuses is refused here too, and one it reads gives the same strings
 * (tests/integration/pyproject.bats compares the two).  Values that are not
 * strings (integers, floats, booleans, dates and times) are kept as the
 * text they were written as, checked only for their lexical shape: offwheel
 * reads strings, arrays and tables.  One deliberate difference from
 * tomllib: the escape \u0000 (a NUL) is refused in strings and keys, since
 * every reader of them takes C text, which a NUL would cut short. */
#ifndef OW_TOML_H
#define OW_TOML_H

#include <stdbool.h>
#include <stddef.h>

#define OW_TOML_SIZE_MAX (4 << 20) /* bytes of one document */
#define OW_TOML_DEPTH_MAX 64       /* arrays and inline tables nested */
#define OW_TOML_NODES_MAX 100000   /* values and tables of one document */

enum ow_toml_kind {
	OW_TOML_TABLE,  /* kids are the members, each with its key */
	OW_TOML_ARRAY,  /* kids are the items (an array of tables too) */
	OW_TOML_STRING, /* text: the decoded string (UTF-8) */
	OW_TOML_SCALAR, /* text: integer, float, boolean or date-time, as written */
};

struct ow_toml {
	enum ow_toml_kind kind;
	char *key;  /* the member's key in its table (decoded), NULL for an item */
	char *text; /* STRING and SCALAR */
	size_t len; /* of text (never holds a NUL: "\u0000" is refused) */
	size_t line; /* where the value starts, from 1 */
	struct ow_toml **kids;
	size_t n;
	unsigned flags; /* the parser's own (how a table was defined) */
	struct ow_strmap *index; /* a table's members by key, once it has a few */
};

/* Parse `len` bytes named `path` in messages; OW_EPARSE with
 * "PATH:LINE: what is wrong" for a document that is not TOML 1.0;
 * OW_ETOOBIG for one over OW_TOML_SIZE_MAX bytes or OW_TOML_NODES_MAX
 * values and tables (its cost is linear in its size below those).  Free the
 * tree with ow_toml_free. */
int ow_toml_parse(const char *text, size_t len, const char *path, struct ow_toml **out);
/* The member `key` of a table, NULL when it has none (or t is no table):
 * hashed (a secret key per table), so a table of many keys costs each
 * lookup O(1), however the keys were chosen. */
const struct ow_toml *ow_toml_get(const struct ow_toml *t, const char *key);
void ow_toml_free(struct ow_toml *t);

#endif
