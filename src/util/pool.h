/* pool.h - run fn(ud, i) for i in [0, n) on up to `jobs` threads; items are
 * handed out one at a time, so large and small items balance.  Returns how
 * many calls returned nonzero. */
#ifndef OW_POOL_H
#define OW_POOL_H

#include <stddef.h>

typedef int (*ow_pool_fn)(void *ud, size_t i);
size_t ow_parallel_for(size_t n, int jobs, ow_pool_fn fn, void *ud);
/* The same, for calls that fail with a negative OW_E* code and its detail
 * (ow_err on their own thread): 0 when none did, else the code of the
 * failing call with the lowest index, its detail made this thread's
 * (deterministic whichever thread failed first).  A positive return of fn
 * (a call that stopped because another failed) is no error. */
int ow_parallel_run(size_t n, int jobs, ow_pool_fn fn, void *ud);

#endif
