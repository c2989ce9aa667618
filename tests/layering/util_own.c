/* tests/layering: src/util sees its own headers (the control for util_up_gpu) */
#include "offwheel/error.h"
#include "event.h"
#include "digest.h"
#include "fsutil.h"
#include "embedded.h"
