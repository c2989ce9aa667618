/* strmap.c - string keys to numbers, hashed with a secret key (strmap.h). */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "offwheel/error.h"

static uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sipround(uint64_t v[4])
{
	v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
	v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
	v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
	v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
}

/* SipHash-1-3 of a NUL-terminated string under key (k0, k1). */
static uint64_t siphash(const struct ow_strmap *m, const char *s)
{
	uint64_t v[4] = {m->k0 ^ 0x736f6d6570736575u, m->k1 ^ 0x646f72616e646f6du,
	                 m->k0 ^ 0x6c7967656e657261u, m->k1 ^ 0x7465646279746573u};
	size_t len = strlen(s), i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		v[3] ^= w, sipround(v), v[0] ^= w;
	}
	uint64_t last = (uint64_t)len << 56;
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)(unsigned char)s[i + j] << (8 * j);
	v[3] ^= last, sipround(v), v[0] ^= last;
	v[2] ^= 0xff;
	sipround(v), sipround(v), sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static size_t slot_of(const struct ow_strmap *m, const char *key)
{
	size_t i = (size_t)siphash(m, key) & (m->cap - 1);
	while (m->slots[i].key && strcmp(m->slots[i].key, key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

size_t *ow_strmap_find(const struct ow_strmap *m, const char *key)
{
	if (!m->n)
		return NULL;
	size_t i = slot_of(m, key);
	return m->slots[i].key ? &m->slots[i].value : NULL;
}

static void seed(struct ow_strmap *m)
{
	uint64_t k[2];
	if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
		/* no entropy yet (early boot): the clock and an address still
		 * keep the key from being known in advance */
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		k[0] = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)m;
		k[1] = (uint64_t)t.tv_sec ^ (uint64_t)(uintptr_t)&t;
	}
	m->k0 = k[0], m->k1 = k[1];
}

static int grow(struct ow_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	struct ow_strmap old = *m;
	if (cap > SIZE_MAX / 2 / sizeof *m->slots ||
	    !(m->slots = calloc(cap, sizeof *m->slots))) {
		m->slots = old.slots;
		return ow_err(OW_ENOMEM, "out of memory (a table of %zu names)", m->n);
	}
	if (!old.cap)
		seed(m);
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			m->slots[slot_of(m, old.slots[i].key)] = old.slots[i];
	free(old.slots);
	return 0;
}

int ow_strmap_add(struct ow_strmap *m, const char *key, size_t value)
{
	if (2 * (m->n + 1) > m->cap) {
		int rc = grow(m);
		if (rc < 0)
			return rc;
	}
	m->slots[slot_of(m, key)] = (struct ow_strmap_slot){key, value};
	m->n++;
	return 0;
}

void ow_strmap_dispose(struct ow_strmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof *m);
}
