/* error.h - one table of error codes plus a per-thread detail message.
 *
 * Convention: library functions return int, 0 on success, a negative OW_E*
 * code on failure, and record what went wrong with ow_err() (which returns
 * the code, so `return ow_err(OW_EHASH, "...")` reads naturally).  The
 * library never prints and never exits; the CLI renders ow_err_detail(). */
#ifndef OW_ERROR_H
#define OW_ERROR_H

#include <stddef.h>

/* X(name, exit code of the CLI, short text) — the CLI's exit codes (README,
 * "Exit codes"): 1 error, 2 usage, 3 verification failed, 4 incomplete,
 * 5 no GPU/driver, 130 interrupted (128 + the signal recorded by
 * ow_interrupt: 130 for SIGINT, 143 for SIGTERM; ow_err_exit_code). */
#define OW_ERROR_TABLE(X)                                          \
	X(EINVAL, 2, "invalid argument")                               \
	X(ENOMEM, 1, "out of memory")                                  \
	X(EIO, 1, "input/output error")                                \
	X(ENOSPC, 1, "no space left on device")                        \
	X(ENOENT, 1, "not found")                                      \
	X(EEXIST, 1, "already exists")                                 \
	X(EPARSE, 1, "malformed input")                                \
	X(ERANGE, 1, "value out of range")                             \
	X(ETOOBIG, 1, "size limit exceeded")                           \
	X(EPOLICY, 1, "refused by policy")                             \
	X(EAUTH, 1, "authentication failed")                           \
	X(EHASH, 3, "hash mismatch")                                   \
	X(EZIP, 3, "invalid wheel archive")                            \
	X(ERECORD, 3, "RECORD check failed")                           \
	X(ESIG, 3, "signature check failed")                           \
	X(EVERIFY, 3, "verification failed")                           \
	X(ENOIMAGE, 3, "no kernel image for the device")               \
	X(ENET, 4, "network error")                                    \
	X(EHTTP, 4, "HTTP error")                                      \
	X(ETLS, 4, "TLS error")                                        \
	X(EINCOMPLETE, 4, "incomplete")                                \
	X(EDB, 1, "index database error")                              \
	X(ESCHEMA, 1, "index database schema not supported")           \
	X(ELOCKED, 1, "workspace locked")                              \
	X(ETIMEOUT, 4, "timed out")                                    \
	X(ECONFLICT, 1, "conflicting requirements")                    \
	X(EUNSUPPORTED, 1, "not supported")                            \
	X(ENODRIVER, 5, "no GPU or CUDA driver")                       \
	X(ECUDA, 1, "CUDA driver error")                               \
	X(EINTERNAL, 1, "internal error")                              \
	X(EINTERRUPTED, 130, "interrupted")

enum ow_error {
	OW_OK = 0,
	OW__ERROR_BASE = -1000,
#define OW_X_ENUM(name, exitc, text) OW_##name,
	OW_ERROR_TABLE(OW_X_ENUM)
#undef OW_X_ENUM
	OW__ERROR_END
};

#define OW_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Record `code` with a formatted detail message; returns `code`. */
int ow_err(int code, const char *fmt, ...) OW_PRINTF(2, 3);
/* Prefix the current detail with more context ("torch-...whl: " + old). */
int ow_err_prefix(int code, const char *fmt, ...) OW_PRINTF(2, 3);
/* The detail message of the last ow_err() on this thread ("" if none). */
const char *ow_err_detail(void);
/* A malloc'd copy of it, for a report field that keeps it (NULL when out of
 * memory: such a field reads as "" then). */
char *ow_err_detail_dup(void);
/* A message for people into dst (n bytes with the NUL), whole when it fits;
 * else its start and its end around " [... N bytes left out ...] ", so that
 * what a message ends with (the cause, what to do) survives a long name in
 * its middle.  Never cuts a UTF-8 sequence. */
void ow_err_fit(char *dst, size_t n, const char *src);
/* An error carried from one thread to another (libgit2's git_error_save /
 * restore): ow_err_save copies this thread's detail with its code;
 * ow_err_restore makes them this thread's last error and returns the code
 * (the copy is freed).  A saved error that could not copy its detail (out
 * of memory) restores as OW_ENOMEM. */
struct ow_err_saved {
	int code;     /* 0: nothing saved */
	char *detail; /* malloc'd */
};
void ow_err_save(struct ow_err_saved *s, int code);
int ow_err_restore(struct ow_err_saved *s);
void ow_err_saved_dispose(struct ow_err_saved *s);
void ow_err_clear(void);
/* "EHASH" for OW_EHASH; "OK" for 0; "UNKNOWN" otherwise. */
const char *ow_err_name(int code);
/* The short text of the table. */
const char *ow_err_text(int code);
/* Process exit code for a library error (0 for OW_OK); for OW_EINTERRUPTED
 * 128 + the signal ow_interrupt recorded (the table's 130 when none was). */
int ow_err_exit_code(int code);

/* Stopping (Ctrl-C, SIGTERM): the one record of the signal that asked this
 * process to stop.  ow_interrupt is for a signal handler (async-signal-safe;
 * the first signal is kept).  From then on the transfer engine ends every
 * transfer with OW_EINTERRUPTED, partial bytes kept for a resume, and the
 * layers above (fetch, crawl, resolve, sync) return OW_EINTERRUPTED with what
 * finished stored. */
void ow_interrupt(int sig);
/* The signal recorded, 0 when none. */
int ow_interrupted(void);

#endif
