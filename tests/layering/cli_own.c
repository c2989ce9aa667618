/* tests/layering: the CLI sees the public API (include/offwheel) and its own headers (the control for cli_up_store) */
#include "cli.h"
#include "offwheel/audit.h"
#include "offwheel/doctor.h"
#include "offwheel/export.h"
#include "offwheel/resolve.h"
#include "offwheel/store.h"
