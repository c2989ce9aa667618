/* tests/layering: src/wheel including a resolve header must not compile */
#include "fetch.h"
#include "resolve.h"
