/* tests/layering: src/gpu sees its own headers and those below (the control for the *_up_* cases) */
#include "devicefit.h"
#include "audit.h"
#include "smoke.h"
#include "resolve.h"
#include "fetch.h"
#include "store.h"
#include "error.h"
