/* tests/layering: src/store including a net header must not compile */
#include "store.h"
#include "http.h"
