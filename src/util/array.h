/* array.h - growing arrays, in amortised O(1) per element appended.
 *
 * Most arrays of the library are a pointer and a count (`items`, `nitems`)
 * in a struct, many of them public, filled by appending.  Growing those by
 * exactly one element per append costs a realloc (and often a copy) each
 * time.  ow_array_more() gives them doubling growth without a capacity
 * field: the capacity is implied by the count, the smallest of 4, 8, 16, ...
 * that holds it, so the array is reallocated only when the count reaches
 * 0, 4, 8, 16, ...
 *
 * The rule that makes this safe: an array grown with ow_array_more() is
 * allocated by nothing else (it starts as NULL with count 0, and its count
 * only grows or is reset together with a free).  Lowering the count is
 * harmless (the block is only ever larger than the count implies).
 *
 *   struct item *g = ow_array_more(l->items, l->n, sizeof *g);
 *   if (!g)
 *           return ow_err(OW_ENOMEM, "...: out of memory");
 *   l->items = g;
 *   l->items[l->n++] = item;
 */
#ifndef OW_ARRAY_H
#define OW_ARRAY_H

#include <stddef.h>

/* Room for element `n` (the count's next) in the array `p` of `n` elements
 * of `size` bytes: `p` itself when it has room, else the grown block (the
 * old one is then freed), NULL when out of memory or when the size would
 * overflow (`p` is then unchanged and still owned by the caller). */
void *ow_array_more(void *p, size_t n, size_t size);
/* The same for `add` more elements at once (room for n + add). */
void *ow_array_grow(void *p, size_t n, size_t add, size_t size);

/* For an array that keeps its capacity beside it (a byte buffer, a list
 * filled in a loop): room for `need` elements in `p`, whose block holds
 * *cap.  `p` itself when it has room, else the block grown to *cap doubled
 * until it holds `need` (and *cap set), NULL as for ow_array_more (`p` and
 * *cap unchanged).  Any realloc'd `p` will do; *cap must not overstate it. */
void *ow_array_reserve(void *p, size_t *cap, size_t need, size_t size);

/* The capacity ow_array_more() gives an array of `n` elements (0 for 0). */
size_t ow_array_capacity(size_t n);

#endif
