/* array.c - implied-capacity growth (array.h). */
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

void *ow_array_more(void *p, size_t n, size_t size)
{
	if (size == 0)
		return NULL;
	if (p && n < ow_array_capacity(n))
		return p;
	/* full (or empty): the next capacity */
	size_t c = n == 0 ? OW_ARRAY_MIN : ow_array_capacity(n);
	if (n != 0) {
		if (c > SIZE_MAX / 2)
			return NULL;
		c *= 2;
	}
	if (c > SIZE_MAX / size)
		return NULL;
	return realloc(p, c * size);
}
