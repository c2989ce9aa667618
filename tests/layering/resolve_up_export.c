/* tests/layering: src/resolve including export's private header must not compile (its public one, offwheel/export.h, is checked by public_headers.py) */
#include "offwheel/resolve.h"
#include "exportint.h"
