/* tests/layering: src/wheel including a resolve header must not compile */
#include "offwheel/fetch.h"
#include "resolveint.h"
