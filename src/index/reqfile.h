/* reqfile.h - pip requirement files (`-r FILE`, `-c FILE`), read as pip
 * reads them, without touching the file system: the caller reads each file
 * named by an include (`-r` / `-c` inside a file) through a callback, so
 * the parser is pure and can be fuzzed.
 *
 * What pip does with a file, in order (pip's req_file module, which these
 * rules follow, checked against it by tests/integration/reqfile.bats):
 *   1. lines are split at "\n" ("\r\n" too); a UTF-8 byte order mark at
 *      the start is dropped;
 *   2. a line ending in "\" is joined with the next, unless it is a
 *      comment line (one whose first non-blank character is "#"), which
 *      ends the joined line; the "\" is removed;
 *   3. "#" at the start of a line or after a blank starts a comment, to
 *      the end of the line ("pkg#frag" keeps its "#"); blank lines go;
 *   4. ${NAME} (NAME of A-Z, 0-9, _) is replaced by the environment
 *      variable's value when that is set and not empty, else kept as is;
 *   5. the words before the first one starting with "-" are the
 *      requirement (PEP 508); the rest are options: per requirement
 *      (--hash=ALG:HEX, repeatable) or, on a line without a requirement,
 *      for the whole run (-r, -c, -i/--index-url, --extra-index-url,
 *      --no-index, --pre, --require-hashes, --trusted-host, ...).
 *
 * What offwheel cannot honour is refused with the file and line, never
 * skipped: editable installs (-e), a requirement that is a path or a URL
 * (`./pkg`, `name @ https://...`), --no-binary (offwheel ships wheels),
 * -f/--find-links, and any option pip does not know either. */
#ifndef OW_REQFILE_H
#define OW_REQFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "pep508.h"
#include "strmap.h"

#define OW_REQFILE_DEPTH_MAX 16       /* -r inside -r inside ... */
#define OW_REQFILE_FILES_MAX 128      /* files read in one parse */
#define OW_REQFILE_SIZE_MAX (4 << 20) /* bytes of one file */
#define OW_REQFILE_HASHES_MAX 64      /* --hash options of one requirement */
#define OW_REQFILE_PROJECTS_MAX 2048  /* projects required (one resolve takes no more) */
#define OW_REQFILE_LINES_MAX 20000    /* requirement and constraint lines, repeats dropped */

/* One requirement line: small (the text, not its parse), so a file of many
 * lines costs little; a line equal to an earlier one (text, constraint and
 * hashes) is dropped as read. */
struct ow_reqline {
	char name[OW_NAME_MAX]; /* the project, normalized */
	bool constraint; /* from a -c file: limits versions, installs nothing */
	char **hashes;   /* "sha256:<64 hex>" (sha384, sha512 too), lowercase */
	size_t nhashes;
	char *where; /* "FILE:LINE", the line it starts on */
	char *text;  /* the requirement as written (joined, comment cut, ${VAR} expanded) */
};

/* Everything read from a file and the files it includes. */
struct ow_reqfile {
	struct ow_reqline *lines;
	size_t nlines;
	char *index_url; /* the last -i / --index-url, or NULL */
	char **extra_index_urls;
	size_t nextra;
	char **trusted_hosts;
	size_t ntrusted;
	bool no_index, pre, require_hashes;
	char *require_hashes_at; /* "FILE:LINE" of the first --require-hashes, or NULL */
	char **files; /* every file read, in the order read */
	size_t nfiles;
	/* the parser's own: lines by text, the projects required so far */
	struct ow_strmap by_text, by_name;
	char **names;
	size_t nnames;
};

/* The caller's side: read the file `ref` named in file `from` (as written:
 * relative paths are relative to `from`'s folder; `from` is NULL for the
 * top file); set *path to the name to use for it from then on (in
 * messages, and as `from` of its own includes) and *text / *len to its
 * bytes, both malloc'd.  Return 0, or a negative OW_E* code with ow_err()
 * detail naming the file.  getenv may be NULL (then ${NAME} stays). */
struct ow_reqfile_io {
	int (*read)(void *ud, const char *from, const char *ref, char **path, char **text,
	            size_t *len);
	const char *(*getenv)(void *ud, const char *name);
	void *ud;
};

/* Read `ref` (a requirements file, or a constraints file when
 * `constraint`) and everything it includes, appending to *rf, which starts
 * zeroed and may collect several files.  OW_EINVAL with detail
 * "FILE:LINE: ..." for what cannot be honoured; *rf keeps what was read
 * before and must still be freed. */
int ow_reqfile_read(struct ow_reqfile *rf, const char *ref, bool constraint,
                    const struct ow_reqfile_io *io);
/* The same for text already in memory, named `path` in messages. */
int ow_reqfile_parse(struct ow_reqfile *rf, const char *path, const char *text, size_t len,
                     bool constraint, const struct ow_reqfile_io *io);
/* Frees the contents; the struct itself is the caller's.  NULL is a no-op. */
void ow_reqfile_dispose(struct ow_reqfile *rf);

/* The file system's side (reqfilefs.c), for struct ow_reqfile_io: `ref`
 * relative to `from`'s folder, lexically normalized ("a/b/../c" -> "a/c"),
 * read whole; and the process environment. */
int ow_reqfile_read_fs(void *ud, const char *from, const char *ref, char **path, char **text,
                       size_t *len);
const char *ow_reqfile_getenv(void *ud, const char *name);

#endif
