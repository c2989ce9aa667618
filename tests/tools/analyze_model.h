/* analyze_model.h - what GCC's analyzer cannot see from one file alone,
 * included (-include) by analyze.py before every src/ file but the one that
 * defines it.
 *
 * ow_err and ow_err_prefix return their code (include/offwheel/error.h,
 * src/util/error.c), so `return ow_err(OW_ENOMEM, ...)` is never 0.  Without
 * this the analyzer, which sees only the declaration, follows a "success"
 * out of every error path and reports the out-parameters it finds unset. */
#include "offwheel/error.h"

#define ow_err(code, ...)                                                        \
	__extension__({                                                          \
		int ow_model_code_ = (code);                                     \
		(ow_err)(ow_model_code_, __VA_ARGS__);                           \
		ow_model_code_;                                                  \
	})
#define ow_err_prefix(code, ...)                                                 \
	__extension__({                                                          \
		int ow_model_code_ = (code);                                     \
		(ow_err_prefix)(ow_model_code_, __VA_ARGS__);                    \
		ow_model_code_;                                                  \
	})
