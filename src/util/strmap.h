/* strmap.h - a map from strings to numbers, for tables whose keys come from
 * input an attacker may write (TOML keys, requirement lines, group names).
 *
 * Open addressing over a power-of-two table kept at most half full; the hash
 * is SipHash-1-3 under a key drawn from the kernel (getrandom) for each
 * map, so keys cannot be chosen to collide: a lookup costs O(1) expected
 * however the input was written.  Keys are borrowed: the caller keeps each
 * key's text alive and unchanged while the map holds it. */
#ifndef OW_STRMAP_H
#define OW_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct ow_strmap_slot {
	const char *key; /* NULL: empty */
	size_t value;
};

struct ow_strmap {
	struct ow_strmap_slot *slots;
	size_t cap, n; /* cap: 0 or a power of two */
	uint64_t k0, k1;
};

/* The value stored under key, or NULL when the map has none. */
size_t *ow_strmap_find(const struct ow_strmap *m, const char *key);
/* Add key (absent: ow_strmap_find said so) with value; 0 or OW_ENOMEM. */
int ow_strmap_add(struct ow_strmap *m, const char *key, size_t value);
/* Frees the table (not the keys); the map is empty again. */
void ow_strmap_dispose(struct ow_strmap *m);

#endif
