/* tests/layering: src/gpu sees its own headers and those below (the control for the *_up_* cases) */
#include "offwheel/devicefit.h"
#include "offwheel/audit.h"
#include "offwheel/smoke.h"
#include "offwheel/resolve.h"
#include "offwheel/fetch.h"
#include "store.h"
#include "offwheel/error.h"
