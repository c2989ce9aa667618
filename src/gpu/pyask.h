/* pyask.h - ask a Python interpreter something (torchsite.c holds it; the
 * smoke's torch lookup and the machine probe use it).
 *
 * Runs `python -c script` in its own process group with stdin from
 * /dev/null and reads what it prints until it closes stdout, into buf (NUL
 * terminated, cut at size - 1 bytes).  An interpreter that does not answer
 * within 60 s ($OFFWHEEL_PYTHON_TIMEOUT seconds) is killed: OW_EIO, the
 * message saying what it was `asked` ("where torch is installed").  One
 * that cannot be started, or exits non-zero: OW_ENOENT.  `quiet`: its
 * stderr goes to /dev/null (a probe of every python3* on PATH). */
#ifndef OW_PYASK_H
#define OW_PYASK_H

#include <stdbool.h>
#include <stddef.h>

int ow_python_ask(const char *python, const char *script, const char *asked, bool quiet,
                  char *buf, size_t size);

#endif
