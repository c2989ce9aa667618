/* tests/layering: src/util including a gpu header must not compile */
#include "offwheel/error.h"
#include "fatbinkern.h"
