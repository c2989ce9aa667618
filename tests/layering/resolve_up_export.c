/* tests/layering: src/resolve including an export header must not compile */
#include "resolve.h"
#include "export.h"
