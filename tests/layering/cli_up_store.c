/* tests/layering: the CLI including the store's internal header (it runs no SQL) must not compile */
#include "offwheel/store.h"
#include "store.h"
