/* tests/layering: src/resolve including a gpu header must not compile */
#include "resolve.h"
#include "audit.h"
