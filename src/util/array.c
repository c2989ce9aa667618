/* array.c - growing arrays (array.h). */
#include "array.h"

#include <stdint.h>
#include <stdlib.h>

#define OW_ARRAY_MIN 4

size_t ow_array_capacity(size_t n)
{
	if (n == 0)
		return 0;
	size_t c = OW_ARRAY_MIN;
	while (c < n) {
		if (c > SIZE_MAX / 2)
			return SIZE_MAX;
		c *= 2;
	}
	return c;
}

/* c elements of size bytes: the block, or NULL when that many bytes do not
 * fit in one object (p is then left as it was). */
static void *resize(void *p, size_t c, size_t size)
{
	if (size == 0 || c > (size_t)PTRDIFF_MAX / size)
		return NULL;
	return realloc(p, c * size);
}

void *ow_array_more(void *p, size_t n, size_t size)
{
	return ow_array_grow(p, n, 1, size);
}

void *ow_array_grow(void *p, size_t n, size_t add, size_t size)
{
	if (add > SIZE_MAX - n)
		return NULL;
	size_t need = n + add;
	if (p && need <= ow_array_capacity(n))
		return p;
	size_t c = ow_array_capacity(need ? need : 1);
	if (c < need || c == SIZE_MAX) /* no power of two holds it */
		return NULL;
	return resize(p, c, size);
}

void *ow_array_reserve(void *p, size_t *cap, size_t need, size_t size)
{
	if (p && need <= *cap)
		return p;
	size_t c = *cap < OW_ARRAY_MIN ? OW_ARRAY_MIN : *cap;
	while (c < need && c <= SIZE_MAX / 2)
		c *= 2;
	if (c < need || (size && c > (size_t)PTRDIFF_MAX / size))
		c = need; /* doubled it would not fit: exactly what was asked */
	void *g = resize(p, c, size);
	if (g)
		*cap = c;
	return g;
}
