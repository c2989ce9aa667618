#include "testutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "offwheel/error.h"

static char *db_path(const char *dir)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/index.db", dir);
	return strdup(buf);
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

static void test_fresh_db_is_migrated(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	ow_db *db;
	assert_int_equal(ow_db_open(path, &db), 0);
	assert_true(ow_db_schema_known() >= 1);
	assert_int_equal(ow_db_schema_version(db), ow_db_schema_known());
	ow_stmt *st = ow_db_stmt(db, OW_SQL_OBJ_INSERT);
	assert_non_null(st);
	ow_stmt_text(st, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ow_stmt_int(st, 2, 0);
	ow_stmt_text(st, 3, "blob");
	ow_stmt_int(st, 4, 1);
	assert_int_equal(ow_stmt_run(st), 0);
	char *problems = (char *)1;
	assert_int_equal(ow_db_check(db, &problems), 0);
	assert_null(problems);
	ow_db_close(db);
	/* reopening applies nothing and keeps the row */
	assert_int_equal(ow_db_open(path, &db), 0);
	st = ow_db_stmt(db, OW_SQL_OBJ_COUNT);
	assert_int_equal(ow_stmt_step(st), 1);
	assert_int_equal(ow_col_int(st, 0), 1);
	ow_db_close(db);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

static void test_newer_schema_is_refused_untouched(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	ow_db *db;
	assert_int_equal(ow_db_open(path, &db), 0);
	ow_db_close(db);
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version=%d", ow_db_schema_known() + 1);
	raw_exec(path, sql);
	assert_int_equal(ow_db_open(path, &db), OW_ESCHEMA);
	assert_non_null(strstr(ow_err_detail(), "newer offwheel"));
	assert_non_null(strstr(ow_err_detail(), "nothing was changed"));
	/* still at the newer version: nothing was changed */
	sqlite3 *h;
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &s, NULL);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), ow_db_schema_known() + 1);
	sqlite3_finalize(s);
	sqlite3_close(h);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

static void test_foreign_database_is_refused(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	raw_exec(path, "CREATE TABLE t(x); PRAGMA application_id=1234; PRAGMA user_version=3;");
	ow_db *db;
	assert_int_equal(ow_db_open(path, &db), OW_ESCHEMA);
	assert_non_null(strstr(ow_err_detail(), "not an offwheel index"));
	tu_rmtree(dir);
	free(dir);
	free(path);
}

static void test_wal_and_foreign_keys_on(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	ow_db *db;
	assert_int_equal(ow_db_open(path, &db), 0);
	/* a failing script is reported with the database path */
	assert_int_equal(ow_db_exec(db, "SELECT * FROM no_such_table"), OW_EDB);
	assert_non_null(strstr(ow_err_detail(), "index.db"));
	/* transactions roll back */
	assert_int_equal(ow_db_begin(db), 0);
	assert_int_equal(ow_db_exec(db, "INSERT INTO objects(sha256, size, kind, created_at) VALUES('"
	                                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'"
	                                ", 0, 'blob', 0)"), 0);
	assert_int_equal(ow_db_rollback(db), 0);
	ow_stmt *st = ow_db_stmt(db, OW_SQL_OBJ_COUNT);
	assert_int_equal(ow_stmt_step(st), 1);
	assert_int_equal(ow_col_int(st, 0), 0);
	ow_db_close(db);
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	sqlite3 *h;
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &s, NULL);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
	sqlite3_finalize(s);
	sqlite3_close(h);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

/* Many commands started at once on a new --home all migrate it: each must
 * see the others' work (the version is read under the write lock), none may
 * fail with "table already exists". Repeated on fresh files to catch the race. */
static void test_concurrent_first_open(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	enum { ROUNDS = 20, PROCS = 8 };
	for (int r = 0; r < ROUNDS; r++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/index-%d.db", dir, r);
		pid_t pids[PROCS];
		for (int i = 0; i < PROCS; i++) {
			pids[i] = fork();
			assert_true(pids[i] >= 0);
			if (pids[i] == 0) {
				ow_db *db;
				int rc = ow_db_open(path, &db);
				if (rc)
					fprintf(stderr, "round %d proc %d: %s\n", r, i, ow_err_detail());
				else
					ow_db_close(db);
				_exit(rc ? 1 : 0);
			}
		}
		int failed = 0;
		for (int i = 0; i < PROCS; i++) {
			int st;
			assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
			failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		assert_int_equal(failed, 0);
		ow_db *db;
		assert_int_equal(ow_db_open(path, &db), 0);
		assert_int_equal(ow_db_schema_version(db), ow_db_schema_known());
		ow_db_close(db);
	}
	tu_rmtree(dir);
	free(dir);
}

/* Where sqlite answers the WAL switch but stays in another mode (here an
 * in-memory database: "memory"; on some network file systems "delete"), the
 * error says so and what to do, instead of a misleading "not an error". */
static void test_no_wal_is_a_clear_error(void **state)
{
	(void)state;
	ow_db *db = NULL;
	assert_int_equal(ow_db_open(":memory:", &db), OW_EDB);
	assert_null(db);
	assert_non_null(strstr(ow_err_detail(), "cannot use sqlite's WAL mode"));
	assert_non_null(strstr(ow_err_detail(), "'memory'"));
	assert_non_null(strstr(ow_err_detail(), "--home on a local disk"));
}

/* Another program's sqlite file (application_id 0, its own tables) is
 * refused byte for byte untouched: no migration, no WAL switch. */
static void test_foreign_tables_are_refused_untouched(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	raw_exec(path, "CREATE TABLE users(name); INSERT INTO users VALUES('alice');");
	size_t n1, n2;
	char *before = tu_read_file(path, &n1);
	ow_db *db;
	assert_int_equal(ow_db_open(path, &db), OW_ESCHEMA);
	assert_non_null(strstr(ow_err_detail(), "not an offwheel index"));
	assert_int_equal(ow_db_open_readonly(path, &db), OW_ESCHEMA);
	char *after = tu_read_file(path, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	assert_int_not_equal(access(wal, F_OK), 0);
	free(before);
	free(after);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

/* Not a database, or broken pages: "damaged", how to recover, exit 3. */
static void test_damaged_database_says_so(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	char junk[3000];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 37 + 11);
	assert_int_equal(tu_write_file(path, junk, sizeof junk), 0);
	ow_db *db;
	int rc = ow_db_open(path, &db);
	assert_int_equal(rc, OW_EVERIFY);
	assert_int_equal(ow_err_exit_code(rc), 3);
	assert_non_null(strstr(ow_err_detail(), "the index database is damaged"));
	assert_non_null(strstr(ow_err_detail(), "restore it from a backup"));
	assert_null(strstr(ow_err_detail(), "another program"));
	tu_rmtree(dir);
	free(dir);
	free(path);
}

/* A reader that may not write: read-only, nothing written, rows readable. */
static void test_readonly_open_writes_nothing(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = db_path(dir);
	ow_db *db;
	assert_int_equal(ow_db_open(path, &db), 0);
	assert_int_equal(ow_db_exec(db, "INSERT INTO objects(sha256, size, kind, created_at) VALUES("
	                                "'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'"
	                                ", 0, 'blob', 0)"),
	                 0);
	ow_db_close(db); /* the last connection: the WAL is checkpointed and removed */
	assert_int_equal(ow_db_open_readonly(path, &db), 0);
	assert_true(ow_db_readonly(db));
	ow_stmt *st = ow_db_stmt(db, OW_SQL_OBJ_COUNT);
	assert_int_equal(ow_stmt_step(st), 1);
	assert_int_equal(ow_col_int(st, 0), 1);
	assert_int_not_equal(ow_db_exec(db, "DELETE FROM objects"), 0);
	ow_db_close(db);
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	assert_int_not_equal(access(wal, F_OK), 0);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_db_is_migrated),
		cmocka_unit_test(test_newer_schema_is_refused_untouched),
		cmocka_unit_test(test_foreign_database_is_refused),
		cmocka_unit_test(test_wal_and_foreign_keys_on),
		cmocka_unit_test(test_concurrent_first_open),
		cmocka_unit_test(test_no_wal_is_a_clear_error),
		cmocka_unit_test(test_foreign_tables_are_refused_untouched),
		cmocka_unit_test(test_damaged_database_says_so),
		cmocka_unit_test(test_readonly_open_writes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
