/* testutil.h - helpers shared by the cmocka unit tests. */
#ifndef OW_TESTUTIL_H
#define OW_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* A fresh empty directory under $TMPDIR; removed by tu_rmtree. Returns a
 * malloc'd path. */
char *tu_mkdtemp(void);
/* rm -rf of a test directory. */
void tu_rmtree(const char *path);
/* Read a whole file (malloc'd, NUL-terminated); *len gets the size. NULL on error. */
char *tu_read_file(const char *path, size_t *len);
/* Write bytes to a file; 0 on success. */
int tu_write_file(const char *path, const void *data, size_t len);
/* snprintf that fails the test when the text does not fit: a test never
 * checks a silently cut string (and the picky -Wformat-truncation=2 set,
 * which also compiles the tests, has nothing to guess about). */
void tu_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* $OW_FIXTURES/<rel> (malloc'd); the tests directory of the source tree. */
char *tu_fixture(const char *rel);

#endif
