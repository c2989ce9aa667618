/* fuzz_tomlkeys.c - the TOML reader's hashed key lookup: every member of
 * every table of a document is found by its key (the hashed lookup agrees
 * with a scan of the table), and a key the table lacks is not found. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct ow_toml *scan(const struct ow_toml *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->kids[i]->key, key))
			return t->kids[i];
	return NULL;
}

static void check(const struct ow_toml *t, int depth)
{
	if (depth > OW_TOML_DEPTH_MAX * 2)
		return;
	for (size_t i = 0; i < t->n; i++) {
		const struct ow_toml *k = t->kids[i];
		if (t->kind == OW_TOML_TABLE) {
			if (ow_toml_get(t, k->key) != k || scan(t, k->key) != k)
				abort();
			size_t n = strlen(k->key);
			char *other = malloc(n + 2);
			if (!other)
				abort();
			memcpy(other, k->key, n);
			memcpy(other + n, "~", 2);
			if (ow_toml_get(t, other) != scan(t, other))
				abort();
			free(other);
		}
		check(k, depth + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ow_toml *t = NULL;
	if (ow_toml_parse((const char *)data, size, "fuzz.toml", &t) == 0) {
		check(t, 0);
		ow_toml_free(t);
	}
	return 0;
}
