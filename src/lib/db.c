/* db.c - sqlite open, migrations and the prepared-statement table. */
#include "db.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded.h"
#include "error.h"

struct ow_stmt {
	sqlite3_stmt *s;
	ow_db *db;
};

struct ow_db {
	sqlite3 *h;
	char *path;
	struct ow_stmt stmts[OW_SQL__COUNT];
};

static const char *const sql_text[OW_SQL__COUNT] = {
#define X(id, text) [OW_SQL_##id] = text,
#include "sql.def"
#undef X
};

static int db_fail(ow_db *db, const char *what)
{
	/* statements are long: name the start of one, the error says the rest */
	return ow_err(OW_EDB, "%s: %.48s%s: %s", db->path, what, strlen(what) > 48 ? "..." : "",
	              sqlite3_errmsg(db->h));
}

int ow_db_exec(ow_db *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = ow_err(OW_EDB, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

static int pragma_int(ow_db *db, const char *sql, int *out)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)
		return db_fail(db, sql);
	int rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(db, sql);
}

int ow_db_schema_known(void)
{
	int n = 0;
	while (ow_migrations[n].name)
		n++;
	return n;
}

int ow_db_schema_version(ow_db *db)
{
	int v = -1;
	pragma_int(db, "PRAGMA user_version", &v);
	return v;
}

static int check_identity(ow_db *db, int version)
{
	int app = 0;
	int rc = pragma_int(db, "PRAGMA application_id", &app);
	if (rc)
		return rc;
	if (app != 0 && app != OW_DB_APPLICATION_ID)
		return ow_err(OW_ESCHEMA,
		              "%s: not an offwheel index (application_id 0x%08x) — use another --home",
		              db->path, (unsigned)app);
	if (app == 0 && version != 0)
		return ow_err(OW_ESCHEMA, "%s: not an offwheel index — use another --home", db->path);
	if (version > ow_db_schema_known())
		return ow_err(OW_ESCHEMA,
		              "%s: written by a newer offwheel (schema %d, this build knows up to %d) "
		              "— upgrade offwheel or use another --home; nothing was changed",
		              db->path, version, ow_db_schema_known());
	return 0;
}

/* Apply migration `index` unless another process already has: the version
 * is re-read after BEGIN IMMEDIATE takes the write lock, so commands started
 * at once on a new --home each see what the others committed. */
static int apply_migration(ow_db *db, int index)
{
	char pragma[96];
	int version = 0, rc = ow_db_begin(db);
	if (rc)
		return rc;
	if ((rc = pragma_int(db, "PRAGMA user_version", &version)) ||
	    (rc = check_identity(db, version)) || version > index) {
		ow_db_rollback(db);
		return rc;
	}
	snprintf(pragma, sizeof pragma, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
	         OW_DB_APPLICATION_ID, index + 1);
	if ((rc = ow_db_exec(db, ow_migrations[index].data)) ||
	    (rc = ow_db_exec(db, pragma)) || (rc = ow_db_commit(db))) {
		ow_db_rollback(db);
		return ow_err_prefix(rc, "migration %s: ", ow_migrations[index].name);
	}
	return 0;
}

static int migrate(ow_db *db)
{
	int version = 0;
	int rc = pragma_int(db, "PRAGMA user_version", &version);
	if (rc || (rc = check_identity(db, version)))
		return rc;
	for (int i = version; i < ow_db_schema_known(); i++)
		if ((rc = apply_migration(db, i)))
			return rc;
	return 0;
}

/* Switching a new file to WAL needs an exclusive lock, and sqlite answers
 * SQLITE_BUSY at once rather than call the busy handler when another opener
 * holds a shared one (measured: 8 processes opening a new --home together).
 * Retry for as long as the busy timeout would have waited. */
static int set_wal(ow_db *db)
{
	for (int waited = 0;; waited += 10) {
		sqlite3_stmt *s = NULL;
		int rc = sqlite3_prepare_v2(db->h, "PRAGMA journal_mode=WAL", -1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(s);
		char mode[16] = "";
		if (rc == SQLITE_ROW)
			snprintf(mode, sizeof mode, "%s", (const char *)sqlite3_column_text(s, 0) ?: "");
		sqlite3_finalize(s);
		if (!strcmp(mode, "wal"))
			return 0;
		if (rc == SQLITE_ROW) /* answered, but stayed in another mode */
			return ow_err(OW_EDB, "%s: the index cannot use sqlite's WAL mode here (it stays "
			              "in '%s' mode; network file systems often refuse it) — use a "
			              "--home on a local disk",
			              db->path, mode);
		if ((rc & 0xff) != SQLITE_BUSY || waited >= 30000)
			return ow_err(OW_EDB, "%s: cannot switch the index to WAL: %s — is another "
			              "program holding it?",
			              db->path, sqlite3_errmsg(db->h));
		sqlite3_sleep(10);
	}
}

int ow_db_open(const char *path, ow_db **out)
{
	ow_db *db = calloc(1, sizeof *db);
	if (!db || !(db->path = strdup(path))) {
		free(db);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	int rc;
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		rc = ow_err(OW_EDB, "%s: cannot open the index: %s", path,
		            db->h ? sqlite3_errmsg(db->h) : "out of memory");
		ow_db_close(db);
		return rc;
	}
	sqlite3_busy_timeout(db->h, 30000);
	sqlite3_extended_result_codes(db->h, 1);
	if ((rc = set_wal(db)) ||
	    (rc = ow_db_exec(db, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")) ||
	    (rc = migrate(db))) {
		ow_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

void ow_db_close(ow_db *db)
{
	if (!db)
		return;
	for (int i = 0; i < OW_SQL__COUNT; i++)
		sqlite3_finalize(db->stmts[i].s);
	sqlite3_close(db->h);
	free(db->path);
	free(db);
}

int ow_db_begin(ow_db *db) { return ow_db_exec(db, "BEGIN IMMEDIATE"); }
int ow_db_commit(ow_db *db) { return ow_db_exec(db, "COMMIT"); }

int ow_db_rollback(ow_db *db)
{
	if (sqlite3_get_autocommit(db->h))
		return 0;
	return ow_db_exec(db, "ROLLBACK");
}

ow_stmt *ow_db_stmt(ow_db *db, enum ow_sql id)
{
	struct ow_stmt *st = &db->stmts[id];
	if (!st->s) {
		if (sqlite3_prepare_v3(db->h, sql_text[id], -1, SQLITE_PREPARE_PERSISTENT, &st->s,
		                       NULL) != SQLITE_OK) {
			db_fail(db, sql_text[id]);
			return NULL;
		}
		st->db = db;
	}
	sqlite3_reset(st->s);
	sqlite3_clear_bindings(st->s);
	return st;
}

static int bind_rc(ow_stmt *st, int rc)
{
	return rc == SQLITE_OK ? 0 : db_fail(st->db, "bind");
}

int ow_stmt_text(ow_stmt *st, int idx, const char *text)
{
	if (!text)
		return ow_stmt_null(st, idx);
	return bind_rc(st, sqlite3_bind_text(st->s, idx, text, -1, SQLITE_TRANSIENT));
}

int ow_stmt_int(ow_stmt *st, int idx, int64_t v)
{
	return bind_rc(st, sqlite3_bind_int64(st->s, idx, v));
}

int ow_stmt_null(ow_stmt *st, int idx) { return bind_rc(st, sqlite3_bind_null(st->s, idx)); }

int ow_stmt_step(ow_stmt *st)
{
	int rc = sqlite3_step(st->s);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	rc = db_fail(st->db, sqlite3_sql(st->s));
	sqlite3_reset(st->s);
	return rc;
}

int ow_stmt_run(ow_stmt *st)
{
	int rc;
	while ((rc = ow_stmt_step(st)) == 1)
		;
	sqlite3_reset(st->s);
	return rc;
}

const char *ow_col_text(ow_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(st->s, col);
}

int64_t ow_col_int(ow_stmt *st, int col) { return sqlite3_column_int64(st->s, col); }

int ow_col_is_null(ow_stmt *st, int col)
{
	return sqlite3_column_type(st->s, col) == SQLITE_NULL;
}

int64_t ow_db_changes(ow_db *db) { return sqlite3_changes64(db->h); }
int64_t ow_db_last_rowid(ow_db *db) { return sqlite3_last_insert_rowid(db->h); }

static int collect(ow_db *db, const char *sql, const char *ok, char **acc, size_t *len)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)
		return db_fail(db, sql);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		char line[512] = "";
		int cols = sqlite3_column_count(s);
		size_t o = 0;
		for (int c = 0; c < cols && o < sizeof line - 1; c++) {
			const unsigned char *t = sqlite3_column_text(s, c);
			int w = snprintf(line + o, sizeof line - o, "%s%s", c ? " " : "",
			                 t ? (const char *)t : "NULL");
			o = w < 0 ? o : (size_t)w + o >= sizeof line ? sizeof line - 1 : o + (size_t)w;
		}
		if (ok && !strcmp(line, ok))
			continue;
		size_t n = strlen(line);
		char *grown = realloc(*acc, *len + n + 2);
		if (!grown) {
			sqlite3_finalize(s);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		*acc = grown;
		memcpy(*acc + *len, line, n);
		(*acc)[*len + n] = '\n';
		*len += n + 1;
		(*acc)[*len] = '\0';
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_fail(db, sql);
}

int ow_db_check(ow_db *db, char **problems)
{
	char *acc = NULL;
	size_t len = 0;
	int rc = collect(db, "PRAGMA integrity_check", "ok", &acc, &len);
	if (!rc)
		rc = collect(db, "PRAGMA foreign_key_check", NULL, &acc, &len);
	if (rc) {
		free(acc);
		return rc;
	}
	*problems = acc;
	return 0;
}
