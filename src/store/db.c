/* db.c - sqlite open, migrations and the prepared-statement table. */
#include "db.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "embedded.h"
#include "fmt.h"
#include "offwheel/str.h"
#include "offwheel/error.h"

struct ow_stmt {
	sqlite3_stmt *s;
	ow_db *db;
};

struct ow_db {
	sqlite3 *h;
	char *path;
	int readonly;
	struct ow_stmt stmts[OW_SQL__COUNT];
};

static const char *const sql_text[OW_SQL__COUNT] = {
#define X(id, text) [OW_SQL_##id] = text,
#include "sql.def"
#undef X
};

/* A file that is not a database or whose pages are broken: say so and how
 * to recover, instead of a generic error (exit 3: damage, like a bad object). */
static int is_damage(int code)
{
	code &= 0xff;
	return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
}

static int damaged(ow_db *db, const char *why)
{
	return ow_err(OW_EVERIFY,
	              "%s: the index database is damaged (%s) — restore it from a backup, or move "
	              "index.db (with index.db-wal and index.db-shm) aside and run 'offwheel crawl' "
	              "again; the objects under objects/ are named by their hash and survive",
	              db->path, why);
}

static int db_fail(ow_db *db, const char *what)
{
	if (is_damage(sqlite3_extended_errcode(db->h)))
		return damaged(db, sqlite3_errmsg(db->h));
	/* statements are long: name the start of one, the error says the rest */
	return ow_err(OW_EDB, "%s: %.48s%s: %s", db->path, what, strlen(what) > 48 ? "..." : "",
	              sqlite3_errmsg(db->h));
}

int ow_db_exec(ow_db *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = is_damage(sqlite3_extended_errcode(db->h))
		             ? damaged(db, msg ? msg : sqlite3_errmsg(db->h))
		             : ow_err(OW_EDB, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
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
	int app = 0, tables = 0;
	int rc = pragma_int(db, "PRAGMA application_id", &app);
	if (rc)
		return rc;
	/* application_id 0 and schema 0 is a new file, or another program's:
	 * never migrate into a database that already has tables */
	if (app == 0 && version == 0 &&
	    (rc = pragma_int(db, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
	                     &tables)))
		return rc;
	if (tables)
		return ow_err(OW_ESCHEMA,
		              "%s: not an offwheel index (an sqlite database with %d table(s) of "
		              "another program) — nothing was changed; use another --home",
		              db->path, tables);
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

/* Version, application_id and tables read in one snapshot: another process
 * creating the same index at once commits all three together. */
static int check_identity_now(ow_db *db, int *version_out)
{
	int version = 0, rc = ow_db_exec(db, "BEGIN");
	if (rc)
		return rc;
	if (!(rc = pragma_int(db, "PRAGMA user_version", &version)))
		rc = check_identity(db, version);
	ow_db_rollback(db); /* nothing was written */
	if (version_out)
		*version_out = version;
	return rc;
}

static int migrate(ow_db *db)
{
	int version = 0;
	int rc = check_identity_now(db, &version);
	if (rc)
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
		if (is_damage(rc))
			return damaged(db, sqlite3_errmsg(db->h));
		if ((rc & 0xff) != SQLITE_BUSY || waited >= 30000)
			return ow_err(OW_EDB, "%s: cannot switch the index to WAL: %s — is another "
			              "program holding it?",
			              db->path, sqlite3_errmsg(db->h));
		sqlite3_sleep(10);
	}
}

static int db_new(const char *path, int flags, ow_db **out)
{
	ow_db *db = calloc(1, sizeof *db);
	if (!db || !(db->path = strdup(path))) {
		free(db);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	db->readonly = (flags & SQLITE_OPEN_READONLY) != 0;
	if (sqlite3_open_v2(path, &db->h, flags, NULL) != SQLITE_OK) {
		int rc = ow_err(OW_EDB, "%s: cannot open the index: %s", path,
		                db->h ? sqlite3_errmsg(db->h) : "out of memory");
		ow_db_close(db);
		return rc;
	}
	sqlite3_busy_timeout(db->h, 30000);
	sqlite3_extended_result_codes(db->h, 1);
	*out = db;
	return 0;
}

int ow_db_open(const char *path, ow_db **out)
{
	ow_db *db;
	int rc = db_new(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db);
	if (rc)
		return rc;
	/* whose file is it?  Asked before anything is written (the WAL switch
	 * rewrites the header): a foreign or damaged file stays as it was */
	if ((rc = check_identity_now(db, NULL)) || (rc = set_wal(db)) ||
	    (rc = ow_db_exec(db, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; "
	                         "PRAGMA cache_size=-16384;")) ||
	    (rc = migrate(db))) {
		ow_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/* Read-only: no WAL switch, no migration, nothing written; the schema must
 * be this build's (an older one needs a writer to migrate it first). */
static int check_readable(ow_db *db)
{
	int version = 0, rc = check_identity_now(db, &version);
	if (rc)
		return rc;
	if (version == 0)
		return ow_err(OW_ESCHEMA, "%s: an empty index — nothing to read", db->path);
	if (version < ow_db_schema_known())
		return ow_err(OW_ESCHEMA,
		              "%s: written by an older offwheel (schema %d, this build reads %d) and "
		              "read-only here — run any writing command (e.g. 'offwheel gc') with "
		              "write access once to upgrade it",
		              db->path, version, ow_db_schema_known());
	return 0;
}

/* file:PATH?immutable=1, the path percent-encoded for sqlite's URI parser. */
static int immutable_uri(const char *path, char *buf, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	if (n < 6)
		return ow_err(OW_ERANGE, "%s: path too long", path);
	memcpy(buf, "file:", 5);
	o = 5;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		            (*p >= '0' && *p <= '9') || strchr("/-._~", *p);
		if (o + 4 >= n)
			return ow_err(OW_ERANGE, "%s: path too long", path);
		if (plain) {
			buf[o++] = (char)*p;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 15];
		}
	}
	if (ow_fmt(buf + o, n - o, "?immutable=1") < 0) {
		buf[0] = '\0'; /* no half URI */
		return ow_err(OW_ERANGE, "%s: path too long", path);
	}
	return 0;
}

/* A WAL database cannot be opened read-only where sqlite may not create
 * index.db-shm.  With no write-ahead log left (a writer that closed cleanly
 * removes it) every committed row is in index.db, and sqlite may read it as
 * immutable; with a log, a plain read-only open (sqlite needs the -shm). */
static int has_wal(const char *path)
{
	char wal[4200];
	struct stat st;
	snprintf(wal, sizeof wal, "%s-wal", path);
	return stat(wal, &st) == 0 && st.st_size > 0;
}

int ow_db_open_readonly(const char *path, ow_db **out)
{
	ow_db *db;
	char uri[8192];
	int rc = has_wal(path) ? db_new(path, SQLITE_OPEN_READONLY, &db)
	         : (rc = immutable_uri(path, uri, sizeof uri))
	             ? rc
	             : db_new(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &db);
	if (rc)
		return rc;
	if ((rc = ow_db_exec(db, "PRAGMA query_only=ON; PRAGMA cache_size=-16384;")) ||
	    (rc = check_readable(db))) {
		ow_db_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

int ow_db_readonly(const ow_db *db) { return db->readonly; }

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

int ow_db_savepoint(ow_db *db) { return ow_db_exec(db, "SAVEPOINT unit"); }
int ow_db_release(ow_db *db) { return ow_db_exec(db, "RELEASE unit"); }

int ow_db_rollback_to(ow_db *db)
{
	int rc = ow_db_exec(db, "ROLLBACK TO unit");
	return rc ? rc : ow_db_exec(db, "RELEASE unit");
}

int ow_db_in_tx(const ow_db *db) { return !sqlite3_get_autocommit(db->h); }

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
		struct ow_str row = {0}; /* a problem is reported whole, however long */
		int cols = sqlite3_column_count(s);
		for (int c = 0; c < cols; c++) {
			const unsigned char *t = sqlite3_column_text(s, c);
			ow_str_printf(&row, "%s%s", c ? " " : "", t ? (const char *)t : "NULL");
		}
		char *line = NULL;
		if (ow_str_take(&row, &line) < 0) {
			sqlite3_finalize(s);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		if (ok && !strcmp(line, ok)) {
			free(line);
			continue;
		}
		size_t n = strlen(line);
		char *grown = ow_array_grow(*acc, *len, n + 2, 1);
		if (!grown) {
			free(line);
			sqlite3_finalize(s);
			return ow_err(OW_ENOMEM, "out of memory");
		}
		*acc = grown;
		memcpy(*acc + *len, line, n);
		free(line);
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
