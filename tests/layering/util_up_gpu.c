/* tests/layering: src/util including a gpu header must not compile */
#include "error.h"
#include "audit.h"
