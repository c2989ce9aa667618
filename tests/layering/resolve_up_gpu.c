/* tests/layering: src/resolve including a gpu header must not compile */
#include "offwheel/resolve.h"
#include "auditint.h"
