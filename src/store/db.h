/* db.h - the sqlite index (the only module that includes sqlite3).
 *
 * Opens HOME/index.db with WAL, synchronous=FULL (a row can mean
 * "verified"), foreign keys and a busy timeout; applies the embedded
 * migrations index/schema/NNNN_*.sql, one transaction each; refuses a
 * database written by a newer offwheel.  All SQL lives in sql.def. */
#ifndef OW_DB_H
#define OW_DB_H

#include <stdint.h>

#define OW_DB_APPLICATION_ID 0x4F57484C /* "OWHL" */

enum ow_sql {
#define X(id, text) OW_SQL_##id,
#include "sql.def"
#undef X
	OW_SQL__COUNT
};

typedef struct ow_db ow_db;
typedef struct ow_stmt ow_stmt;

/* A file that is not a database, or has broken pages, is OW_EVERIFY with a
 * message that says it is damaged and how to recover; another program's
 * sqlite file (tables, but no offwheel application_id) is OW_ESCHEMA and
 * left untouched. */
int ow_db_open(const char *path, ow_db **out);
/* For readers of a workspace they cannot write: SQLITE_OPEN_READONLY, no
 * WAL switch, no migration (an older schema is refused with a message). */
int ow_db_open_readonly(const char *path, ow_db **out);
int ow_db_readonly(const ow_db *db);
void ow_db_close(ow_db *db);
/* The schema version this build writes (number of embedded migrations). */
int ow_db_schema_known(void);
int ow_db_schema_version(ow_db *db);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. */
int ow_db_begin(ow_db *db);
int ow_db_commit(ow_db *db);
int ow_db_rollback(ow_db *db);
/* A nested unit of work inside an open transaction (SQL SAVEPOINT): kept
 * with release, undone (the outer transaction goes on) with rollback_to. */
int ow_db_savepoint(ow_db *db);
int ow_db_release(ow_db *db);
int ow_db_rollback_to(ow_db *db);
/* Whether a transaction is open. */
int ow_db_in_tx(const ow_db *db);
/* Run a literal SQL script (no results). */
int ow_db_exec(ow_db *db, const char *sql);

/* The prepared statement `id`, reset and with bindings cleared.  NULL (with
 * ow_err set) only when preparing fails. */
ow_stmt *ow_db_stmt(ow_db *db, enum ow_sql id);
/* Bind parameters, 1-based as in sqlite.  text NULL binds NULL. */
int ow_stmt_text(ow_stmt *st, int idx, const char *text);
int ow_stmt_int(ow_stmt *st, int idx, int64_t v);
int ow_stmt_null(ow_stmt *st, int idx);
/* 1 = a row is ready, 0 = done, < 0 = error. */
int ow_stmt_step(ow_stmt *st);
/* Step to completion, then reset: for INSERT/UPDATE/DELETE, and to end a
 * SELECT early (its remaining rows are discarded and the statement is
 * released for the next use). */
int ow_stmt_run(ow_stmt *st);
/* Column readers, 0-based.  Text is valid until the next step/reset. */
const char *ow_col_text(ow_stmt *st, int col);
int64_t ow_col_int(ow_stmt *st, int col);
int ow_col_is_null(ow_stmt *st, int col);
int64_t ow_db_changes(ow_db *db);
int64_t ow_db_last_rowid(ow_db *db);

/* PRAGMA integrity_check + foreign_key_check; *problems gets a malloc'd
 * text of what was found (NULL when clean). */
int ow_db_check(ow_db *db, char **problems);

#endif
