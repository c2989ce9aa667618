/* test_http.c - the transfer engine against tests/tools/faultserver.py
 * (plain HTTP and HTTPS with a test PKI made by tests/tools/mkcerts.sh). */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "http.h"

#define BIG_SIZE 200000

struct server {
	pid_t pid;
	int port;
};

static char *root;  /* files served */
static char *certs; /* test PKI */
static unsigned char *big;
static struct server plain;
static char big_etag[256], big_lastmod[64];

/* ---- fixtures ---------------------------------------------------------------- */

static char *tool_path(const char *name)
{
	const char *src = getenv("OW_SOURCE_DIR");
	char *p = NULL;
	if (src && asprintf(&p, "%s/tests/tools/%s", src, name) > 0)
		return p;
	if (asprintf(&p, "%s/../tools/%s", ".", name) < 0)
		return NULL;
	return p;
}

static int start_server(struct server *s, const char *cert)
{
	int fd[2];
	char *script = tool_path("faultserver.py");
	char certp[512], keyp[512];
	if (pipe(fd))
		return -1;
	snprintf(certp, sizeof certp, "%s/%s", certs ? certs : "", cert ? cert : "");
	snprintf(keyp, sizeof keyp, "%s/server.key", certs ? certs : "");
	s->pid = fork();
	if (s->pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (cert)
			execlp("python3", "python3", script, "--root", root, "--cert", certp, "--key", keyp,
			       (char *)NULL);
		else
			execlp("python3", "python3", script, "--root", root, (char *)NULL);
		_exit(127);
	}
	free(script);
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	int ok = f && fscanf(f, "%d", &s->port) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static void stop_server(struct server *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

static int setup_all(void **state)
{
	(void)state;
	root = tu_mkdtemp();
	big = malloc(BIG_SIZE);
	for (size_t i = 0; i < BIG_SIZE; i++)
		big[i] = (unsigned char)((i * 2654435761u) >> 13);
	char p[512];
	snprintf(p, sizeof p, "%s/big.bin", root);
	tu_write_file(p, big, BIG_SIZE);
	snprintf(p, sizeof p, "%s/small.txt", root);
	tu_write_file(p, "hello\n", 6);
	return start_server(&plain, NULL);
}

static int teardown_all(void **state)
{
	(void)state;
	stop_server(&plain);
	tu_rmtree(root);
	if (certs)
		tu_rmtree(certs);
	free(root);
	free(certs);
	free(big);
	return 0;
}

/* ---- a sink that records restarts ------------------------------------------ */

struct sink {
	struct ow_http_membuf m;
	int restarts;
	int fail_after; /* >0: return OW_EIO once this many bytes arrived */
	ow_http *cancel;
	int raise_at; /* >0: raise SIGUSR1 once this many bytes arrived */
};

static int sink_data(void *ud, const void *buf, size_t len)
{
	struct sink *s = ud;
	if (s->fail_after && s->m.len >= (size_t)s->fail_after)
		return ow_err(OW_ENOSPC, "disk full (test)");
	if (s->cancel && s->m.len > 100000)
		ow_http_cancel(s->cancel);
	if (s->raise_at && s->m.len >= (size_t)s->raise_at) {
		s->raise_at = 0;
		raise(SIGUSR1);
	}
	return ow_http_membuf_write(&s->m, buf, len);
}

static int sink_restart(void *ud)
{
	struct sink *s = ud;
	s->restarts++;
	return ow_http_membuf_restart(&s->m);
}

static int allow_ud_hosts(void *ud, const char *url)
{
	const char *extra = ud;
	if (strstr(url, "://127.0.0.1:"))
		return 0;
	return extra && strstr(url, extra) ? 0 : 1;
}

static void test_opts(struct ow_http_opts *o)
{
	ow_http_opts_default(o);
	o->backoff_base_ms = 10;
	o->backoff_max_ms = 100;
	o->low_speed_time_s = 1;
	o->connect_timeout_ms = 2000;
	o->retry_budget_ms = 15000;
	o->max_attempts = 3;
	o->allow_url = allow_ud_hosts;
}

static void url_of(char *buf, size_t n, const struct server *s, const char *scheme,
                   const char *path)
{
	snprintf(buf, n, "%s://127.0.0.1:%d%s", scheme, s->port, path);
}

/* One transfer through a fresh engine; the sink keeps the body. */
static int run_one(struct ow_http_opts *o, struct ow_http_req *q, struct sink *s)
{
	ow_http *h;
	int rc = ow_http_new(&h, o);
	if (rc)
		return rc;
	s->m.cap = s->m.cap ? s->m.cap : 64u << 20;
	q->on_data = sink_data;
	q->on_restart = sink_restart;
	q->ud = s;
	if (s->cancel)
		s->cancel = h;
	rc = ow_http_add(h, q);
	if (!rc)
		rc = ow_http_run(h);
	ow_http_free(h);
	return rc;
}

static int get_path(const char *path, struct ow_http_req *q, struct sink *s)
{
	struct ow_http_opts o;
	static char url[512];
	test_opts(&o);
	url_of(url, sizeof url, &plain, "http", path);
	q->url = url;
	q->flags |= OW_HTTP_ALLOW_HTTP;
	return run_one(&o, q, s);
}

/* The fault server's /stats document (malloc'd). */
static char *server_stats(const struct server *srv, int reset)
{
	struct ow_http_opts o;
	struct ow_http_req q = {0};
	char url[256], *body = NULL;
	size_t len;
	test_opts(&o);
	url_of(url, sizeof url, srv, "http", reset ? "/stats/reset" : "/stats");
	q.url = url;
	q.flags = OW_HTTP_ALLOW_HTTP;
	assert_int_equal(ow_http_get_buffer(&o, &q, 1u << 24, &body, &len), 0);
	return body;
}

static void assert_big(const struct sink *s)
{
	assert_int_equal(s->m.len, BIG_SIZE);
	assert_memory_equal(s->m.data, big, BIG_SIZE);
}

/* ---- plain transfers and conditional GET ----------------------------------- */

static void test_plain_get(void **state)
{
	(void)state;
	struct ow_http_req q = {0};
	struct sink s = {0};
	assert_int_equal(get_path("/big.bin", &q, &s), 0);
	assert_big(&s);
	assert_int_equal(q.res.status, 200);
	assert_int_equal(q.res.bytes, BIG_SIZE);
	assert_int_equal(q.res.attempts, 1);
	assert_int_equal(s.restarts, 0);
	assert_true(q.res.etag[0] == '"');
	assert_true(strstr(q.res.last_modified, "GMT") != NULL);
	snprintf(big_etag, sizeof big_etag, "%s", q.res.etag);
	snprintf(big_lastmod, sizeof big_lastmod, "%s", q.res.last_modified);
	ow_http_membuf_dispose(&s.m);
}

static void test_conditional_304(void **state)
{
	(void)state;
	struct ow_http_req q = {.if_none_match = big_etag};
	struct sink s = {0};
	assert_int_equal(get_path("/big.bin", &q, &s), 0);
	assert_int_equal(q.res.status, 304);
	assert_true(q.res.not_modified);
	assert_int_equal(s.m.len, 0);
	assert_string_equal(q.res.etag, big_etag);

	struct ow_http_req q2 = {.if_modified_since = big_lastmod};
	assert_int_equal(get_path("/big.bin", &q2, &s), 0);
	assert_int_equal(q2.res.status, 304);

	struct ow_http_req q3 = {.if_none_match = "\"stale\""};
	assert_int_equal(get_path("/big.bin", &q3, &s), 0);
	assert_int_equal(q3.res.status, 200);
	assert_big(&s);
	ow_http_membuf_dispose(&s.m);
}

static void test_get_buffer_and_cap(void **state)
{
	(void)state;
	struct ow_http_opts o;
	char url[256], *body = NULL;
	size_t len = 0;
	test_opts(&o);
	url_of(url, sizeof url, &plain, "http", "/small.txt");
	struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
	assert_int_equal(ow_http_get_buffer(&o, &q, 1000, &body, &len), 0);
	assert_int_equal(len, 6);
	assert_string_equal(body, "hello\n");
	free(body);
	url_of(url, sizeof url, &plain, "http", "/big.bin");
	struct ow_http_req q2 = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
	assert_int_equal(ow_http_get_buffer(&o, &q2, 1000, &body, &len), OW_ETOOBIG);
	assert_null(body);
	url_of(url, sizeof url, &plain, "http", "/nope.html");
	struct ow_http_req q3 = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
	assert_int_equal(ow_http_get_buffer(&o, &q3, 1000, &body, &len), OW_ENOENT);
	assert_non_null(strstr(ow_err_detail(), "not found (HTTP 404)"));
	assert_non_null(strstr(ow_err_detail(), "/nope.html"));
}

/* ---- faults ---------------------------------------------------------------------- */

struct fault_case {
	const char *path;
	uint64_t expected; /* expected_size for the request, 0 = none */
	int rc;
	unsigned attempts; /* 0 = don't check */
	const char *detail; /* substring of the detail, NULL = don't check */
};

/* Transient faults: they hit once (or twice), then the file is served. */
static const struct fault_case transient[] = {
	{"/fault/truncate/big.bin?fail=1", 0, 0, 2, NULL},
	{"/fault/truncate-nocl/big.bin?fail=1", BIG_SIZE, 0, 2, NULL},
	{"/fault/reset/big.bin?fail=2", 0, 0, 3, NULL},
	{"/fault/stall/big.bin?fail=1", 0, 0, 2, NULL},
	{"/fault/hang/big.bin?fail=1", 0, 0, 2, NULL},
	{"/fault/lie-cl-long/big.bin?fail=1", 0, 0, 3, NULL}, /* 416 then restart */
	{"/fault/503/big.bin?fail=2", 0, 0, 3, NULL},
	{"/fault/500/big.bin?fail=1", 0, 0, 2, NULL},
	{"/fault/429/big.bin?fail=1&ra=0", 0, 0, 2, NULL},
	{"/fault/503/big.bin?fail=1&ra=date-5", 0, 0, 2, NULL},
	{"/fault/range-wrong/big.bin?fail=1", 0, 0, 1, NULL},
};

/* Persistent faults: each ends with its own clear error. */
static const struct fault_case persistent[] = {
	{"/fault/truncate/big.bin", 0, OW_ENET, 3, "gave up after 3 attempts"},
	{"/fault/truncate-nocl/big.bin", BIG_SIZE, OW_ENET, 3, "closed after"},
	{"/fault/reset/big.bin", 0, OW_ENET, 3, NULL},
	{"/fault/stall/big.bin", 0, OW_ETIMEOUT, 3, "stalled"},
	{"/fault/503/big.bin", 0, OW_EHTTP, 3, "HTTP 503"},
	{"/fault/429/big.bin?ra=999999", 0, OW_EHTTP, 1, "Retry-After '999999'"},
	{"/fault/503/big.bin?ra=date+86400", 0, OW_EHTTP, 1, "more than the 60 s"},
	{"/fault/404/big.bin", 0, OW_ENOENT, 1, "HTTP 404"},
	{"/fault/403/big.bin", 0, OW_ENOENT, 1, "HTTP 403"},
	{"/fault/400/big.bin", 0, OW_EHTTP, 1, "status 400"},
	{"/fault/lie-cl-short/big.bin", BIG_SIZE, OW_EHTTP, 1, "disagrees with the expected"},
	{"/fault/lie-cl-long/big.bin", BIG_SIZE, OW_EHTTP, 1, "disagrees with the expected"},
	{"/fault/lie-cl-long/big.bin", 0, OW_ENET, 3, NULL},
	{"/big.bin", BIG_SIZE - 1, OW_EHTTP, 1, "disagrees"},
	{"/fault/nocl/big.bin", BIG_SIZE - 1, OW_ETOOBIG, 1, "expected size"},
	{"/fault/cl-garbage/big.bin", 0, OW_EHTTP, 1, "Content-Length"},
	{"/fault/cl-negative/big.bin", 0, OW_EHTTP, 1, NULL},
	{"/fault/cl-double/big.bin", 0, OW_EHTTP, 1, "Content-Length"},
	{"/fault/cl-huge/big.bin", 0, OW_ETOOBIG, 1, "size cap"},
	{"/fault/gzip/big.bin", 0, OW_EHTTP, 1, "Content-Encoding 'gzip'"},
	{"/fault/endless/big.bin", 0, OW_ETOOBIG, 1, "size cap"},
	{"/fault/endless-chunked/big.bin", 0, OW_ETOOBIG, 1, "size cap"},
	{"/fault/header-flood/big.bin", 0, OW_ETOOBIG, 1, "headers exceed"},
	{"/fault/header-huge/big.bin", 0, OW_ETOOBIG, 1, "headers over libcurl's limit"},
	{"/fault/not-modified/big.bin", 0, OW_EHTTP, 1, "304 Not Modified to a request that was not"},
	{"/fault/trickle/big.bin?every=0.05", 0, OW_ETIMEOUT, 3, "below the minimum of 10240 B/s"},
	{"/fault/range-norange/big.bin", 0, OW_EHTTP, 1, "without Range"},
	{"/fault/redirect-file/big.bin", 0, OW_EPOLICY, 1, "scheme file not allowed"},
	{"/fault/redirect-other-host/big.bin", 0, OW_EPOLICY, 1, "localhost"},
	{"/fault/redirect-loop/big.bin", 0, OW_EPOLICY, 1, "redirect loop"},
	{"/fault/redirect/big.bin?n=9", 0, OW_EPOLICY, 1, "more than 5 redirects"},
	{"/fault/nonsense/big.bin", 0, OW_EHTTP, 1, "status 400"},
};

static void run_case(const struct fault_case *c)
{
	struct ow_http_req q = {.expected_size = c->expected, .max_size = 1u << 20};
	struct sink s = {0};
	int rc = get_path(c->path, &q, &s);
	if (rc != c->rc || (c->attempts && q.res.attempts != c->attempts) ||
	    (c->detail && !strstr(q.res.detail, c->detail)))
		fail_msg("%s: rc %s attempts %u detail '%s'", c->path, ow_err_name(rc),
		         q.res.attempts, q.res.detail);
	if (rc == 0)
		assert_big(&s);
	else
		assert_non_null(strstr(q.res.detail, "127.0.0.1"));
	ow_http_membuf_dispose(&s.m);
}

static void test_transient_faults_recover(void **state)
{
	(void)state;
	free(server_stats(&plain, 1));
	for (size_t i = 0; i < sizeof transient / sizeof transient[0]; i++)
		run_case(&transient[i]);
	/* the retries after mid-body failures asked for the rest only */
	char *st = server_stats(&plain, 0);
	assert_non_null(strstr(st, "\"range\": \"bytes=100000-\", \"if_range\": \"\\\""));
	assert_null(strstr(st, "\"accept_encoding\": null"));
	free(st);
}

static void test_persistent_faults_fail_clearly(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof persistent / sizeof persistent[0]; i++)
		run_case(&persistent[i]);
}

static void test_redirects_followed_when_allowed(void **state)
{
	(void)state;
	struct ow_http_req q = {0};
	struct sink s = {0};
	assert_int_equal(get_path("/fault/redirect/big.bin?n=3", &q, &s), 0);
	assert_big(&s);
	assert_int_equal(q.res.redirects, 3);
	assert_int_equal(q.res.attempts, 1);
	assert_non_null(strstr(q.res.effective_url, "127.0.0.1"));
	assert_null(strstr(q.res.effective_url, "fault"));
	ow_http_membuf_dispose(&s.m);
}

static void test_retry_after_honoured(void **state)
{
	(void)state;
	struct ow_http_req q = {0};
	struct sink s = {0};
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(get_path("/fault/429/big.bin?fail=1&ra=1", &q, &s), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(dt >= 0.95);
	assert_int_equal(q.res.attempts, 2);
	assert_big(&s);
	ow_http_membuf_dispose(&s.m);
}

static void test_retry_budget(void **state)
{
	(void)state;
	struct ow_http_opts o;
	char url[256];
	struct sink s = {0};
	test_opts(&o);
	o.retry_budget_ms = 300;
	o.max_attempts = 10;
	url_of(url, sizeof url, &plain, "http", "/fault/503/big.bin?ra=2");
	struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
	assert_int_equal(run_one(&o, &q, &s), OW_EHTTP);
	assert_int_equal(q.res.attempts, 1);
	assert_non_null(strstr(q.res.detail, "retry budget"));
}

/* A deadline bounds the whole transfer even when it is never silent and no
 * rate is asked for. */
static void test_deadline(void **state)
{
	(void)state;
	struct ow_http_opts o;
	char url[256];
	struct sink s = {0};
	struct timespec a, b;
	test_opts(&o);
	o.min_rate_bytes = 0;
	o.low_speed_time_s = 30;
	o.deadline_floor_ms = 1500;
	url_of(url, sizeof url, &plain, "http", "/fault/trickle/big.bin?every=0.05");
	struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(run_one(&o, &q, &s), OW_ETIMEOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(dt >= 1.4 && dt < 5);
	assert_non_null(strstr(q.res.detail, "the deadline for this transfer"));
	ow_http_membuf_dispose(&s.m);
}

/* Validators with control characters or over the length are never kept
 * (they would be replayed); a close-delimited HTTP/1.x body is flagged. */
static void test_validators_and_framing(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		int etag_kept, close_delimited;
	} cases[] = {
	    {"/big.bin", 1, 0},
	    {"/fault/etag-hostile/big.bin", 0, 0},
	    {"/fault/etag-hostile/big.bin?kind=long", 0, 0},
	    {"/fault/nocl/big.bin", 1, 1},
	    {"/fault/http10/big.bin", 0, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ow_http_req q = {0};
		struct sink s = {0};
		int rc = get_path(cases[i].path, &q, &s);
		if (rc || (q.res.etag[0] != 0) != cases[i].etag_kept ||
		    q.res.close_delimited != cases[i].close_delimited)
			fail_msg("%s: rc %s etag '%s' close_delimited %d", cases[i].path,
			         ow_err_name(rc), q.res.etag, q.res.close_delimited);
		assert_big(&s);
		ow_http_membuf_dispose(&s.m);
	}
}

/* ---- resume ----------------------------------------------------------------------- */

static void prefill(struct sink *s, size_t n)
{
	s->m.cap = 64u << 20;
	assert_int_equal(ow_http_membuf_write(&s->m, big, n), 0);
}

static void test_resume_with_right_206(void **state)
{
	(void)state;
	struct ow_http_req q = {.resume_from = 1000, .if_range = big_etag,
	                        .expected_size = BIG_SIZE};
	struct sink s = {0};
	free(server_stats(&plain, 1));
	prefill(&s, 1000);
	assert_int_equal(get_path("/big.bin", &q, &s), 0);
	assert_big(&s);
	assert_int_equal(q.res.status, 206);
	assert_true(q.res.resumed);
	assert_false(q.res.restarted);
	assert_int_equal(s.restarts, 0);
	assert_int_equal(q.res.received, BIG_SIZE - 1000);
	assert_int_equal(q.res.resumed_from, 1000);
	assert_int_equal(q.res.resume_basis, OW_HTTP_RESUME_IF_RANGE);
	char *st = server_stats(&plain, 0);
	assert_non_null(strstr(st, "\"range\": \"bytes=1000-\""));
	free(st);
	ow_http_membuf_dispose(&s.m);
}

struct restart_case {
	const char *path;
	const char *if_range;
	unsigned attempts;
};

static void test_resume_restarts(void **state)
{
	(void)state;
	static const struct restart_case cases[] = {
		{"/big.bin", "\"changed\"", 1},                 /* If-Range fails: 200 */
		{"/fault/range-ignore/big.bin", NULL, 1},       /* 200 to a Range */
		{"/fault/range-wrong/big.bin", NULL, 2},        /* 206 off by one */
		{"/fault/range-badtotal/big.bin", NULL, 2},     /* 206, wrong total */
		{"/big.bin", "", 1},                            /* no validator: no Range */
		{"/fault/ifrange-ignore/big.bin", NULL, 2},     /* 206 of another version */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct restart_case *c = &cases[i];
		struct ow_http_req q = {.resume_from = 5000, .expected_size = BIG_SIZE,
		                        .if_range = c->if_range ? c->if_range : big_etag};
		struct sink s = {0};
		prefill(&s, 5000);
		memset(s.m.data, 'x', 5000); /* bytes that must be discarded */
		int rc = get_path(c->path, &q, &s);
		if (rc || s.restarts != 1 || !q.res.restarted || q.res.resumed ||
		    q.res.attempts != c->attempts)
			fail_msg("%s: rc %s restarts %d attempts %u %s", c->path, ow_err_name(rc),
			         s.restarts, q.res.attempts, q.res.detail);
		assert_big(&s);
		ow_http_membuf_dispose(&s.m);
	}
}

/* The resume rule: the known hash decides with a plain Range, else the
 * server's validator with If-Range, else nothing is continued. */
static void test_resume_basis(void **state)
{
	(void)state;
	static const struct {
		uint64_t held;
		const char *validator;
		int hash_known;
		enum ow_http_resume want;
	} cases[] = {
	    {0, "\"e\"", 1, OW_HTTP_RESUME_NONE},
	    {0, NULL, 0, OW_HTTP_RESUME_NONE},
	    {5, NULL, 0, OW_HTTP_RESUME_NONE},
	    {5, "", 0, OW_HTTP_RESUME_NONE},
	    {5, "\"e\"", 0, OW_HTTP_RESUME_IF_RANGE},
	    {5, "Tue, 01 Dec 2026 10:00:00 GMT", 0, OW_HTTP_RESUME_IF_RANGE},
	    {5, NULL, 1, OW_HTTP_RESUME_PLAIN},
	    {5, "", 1, OW_HTTP_RESUME_PLAIN},
	    {5, "\"e\"", 1, OW_HTTP_RESUME_PLAIN},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (ow_http_resume_basis(cases[i].held, cases[i].validator, cases[i].hash_known) !=
		    cases[i].want)
			fail_msg("case %zu: held %llu validator '%s' hash %d", i,
			         (unsigned long long)cases[i].held,
			         cases[i].validator ? cases[i].validator : "(null)", cases[i].hash_known);
}

struct plain_case {
	const char *path;
	const char *if_range;
	unsigned flags;
	int resumed;         /* else restarted from zero */
	const char *request; /* in the server's record of the request */
};

/* A server or cache without ETag / Last-Modified: with the caller's hash
 * to decide, the rest is asked for with a plain Range; without, nothing is
 * continued; a 200 to the Range starts over cleanly. */
static void test_resume_without_validators(void **state)
{
	(void)state;
	static const struct plain_case cases[] = {
		{"/fault/no-validators/big.bin", NULL, OW_HTTP_RESUME_BY_HASH, 1,
		 "\"range\": \"bytes=5000-\", \"if_range\": null"},
		{"/fault/no-validators/big.bin", NULL, 0, 0, "\"range\": null, \"if_range\": null"},
		/* the hash decides even where a validator is known: If-Range is not sent */
		{"/big.bin", big_etag, OW_HTTP_RESUME_BY_HASH, 1,
		 "\"range\": \"bytes=5000-\", \"if_range\": null"},
		{"/fault/range-ignore/big.bin", NULL, OW_HTTP_RESUME_BY_HASH, 0,
		 "\"range\": \"bytes=5000-\", \"if_range\": null"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct plain_case *c = &cases[i];
		struct ow_http_req q = {.resume_from = 5000, .expected_size = BIG_SIZE,
		                        .if_range = c->if_range, .flags = c->flags};
		struct sink s = {0};
		free(server_stats(&plain, 1));
		prefill(&s, 5000);
		if (!c->resumed)
			memset(s.m.data, 'x', 5000); /* bytes that must be discarded */
		int rc = get_path(c->path, &q, &s);
		char *st = server_stats(&plain, 0);
		if (rc || q.res.resumed != c->resumed || q.res.restarted == c->resumed ||
		    s.restarts != !c->resumed || !strstr(st, c->request))
			fail_msg("%s: rc %s resumed %d restarts %d %s; server saw %s", c->path,
			         ow_err_name(rc), q.res.resumed, s.restarts, q.res.detail, st);
		assert_int_equal(q.res.resumed_from, c->resumed ? 5000 : 0);
		assert_int_equal(q.res.resume_basis,
		                 c->resumed ? OW_HTTP_RESUME_PLAIN : OW_HTTP_RESUME_NONE);
		assert_int_equal(q.res.received, c->resumed ? BIG_SIZE - 5000 : BIG_SIZE);
		assert_big(&s);
		free(st);
		ow_http_membuf_dispose(&s.m);
	}
}

/* ---- byte ranges ------------------------------------------------------------------ */

struct range_case {
	const char *path;
	uint64_t off, len;
	unsigned flags;
	uint64_t expected; /* expected_size */
	int rc;
	uint64_t start, n; /* rc 0: the bytes delivered */
	const char *detail;
};

static void test_ranges(void **state)
{
	(void)state;
	static const struct range_case cases[] = {
		{"/big.bin", 0, 1000, OW_HTTP_RANGE_SUFFIX, 0, 0, BIG_SIZE - 1000, 1000, NULL},
		{"/big.bin", 0, 1000000, OW_HTTP_RANGE_SUFFIX, 0, 0, 0, BIG_SIZE, NULL},
		{"/big.bin", 1000, 1000, 0, BIG_SIZE, 0, 1000, 1000, NULL},
		{"/big.bin", BIG_SIZE - 500, 1000, 0, 0, 0, BIG_SIZE - 500, 500, NULL},
		{"/small.txt", 0, 1000, OW_HTTP_RANGE_SUFFIX, 0, 0, 0, 6, NULL},
		/* the size the caller knows must be the one the server says */
		{"/big.bin", 1000, 1000, 0, BIG_SIZE + 1, OW_EHTTP, 0, 0, "not the range asked for"},
		{"/fault/range-wrong/big.bin", 0, 1000, OW_HTTP_RANGE_SUFFIX, 0, OW_EHTTP, 0, 0,
		 "not the range asked for"},
		{"/fault/range-wrong/big.bin", 5000, 100, 0, 0, OW_EHTTP, 0, 0, "bytes=5000-5099"},
		{"/fault/range-badtotal/big.bin", 5000, 100, 0, 0, OW_EHTTP, 0, 0, "Content-Range"},
		{"/big.bin", BIG_SIZE + 10, 100, 0, 0, OW_EHTTP, 0, 0, "HTTP 416"},
		/* a server that ignores ranges: flagged, nothing delivered */
		{"/fault/range-ignore/big.bin", 0, 1000, OW_HTTP_RANGE_SUFFIX, 0, OW_EUNSUPPORTED, 0, 0,
		 "does not serve byte ranges"},
		{"/fault/range-ignore/big.bin", 10, 10, 0, 0, OW_EUNSUPPORTED, 0, 0, "HTTP 200"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct range_case *c = &cases[i];
		struct ow_http_req q = {.range_off = c->off, .range_len = c->len, .flags = c->flags,
		                        .expected_size = c->expected};
		struct sink s = {0};
		int rc = get_path(c->path, &q, &s);
		if (rc != c->rc || (c->detail && !strstr(q.res.detail, c->detail)))
			fail_msg("case %zu %s: rc %s detail '%s'", i, c->path, ow_err_name(rc),
			         q.res.detail);
		assert_int_equal(q.res.range_ignored, c->rc == OW_EUNSUPPORTED);
		if (rc) {
			assert_int_equal(s.m.len, 0);
			assert_int_equal(q.res.received, 0);
		} else {
			const unsigned char *want = !strcmp(c->path, "/small.txt")
			                                ? (const unsigned char *)"hello\n"
			                                : big;
			uint64_t total = !strcmp(c->path, "/small.txt") ? 6 : BIG_SIZE;
			assert_int_equal(q.res.status, 206);
			assert_int_equal(q.res.range_start, c->start);
			assert_int_equal(q.res.range_total, total);
			assert_int_equal(s.m.len, c->n);
			assert_memory_equal(s.m.data, want + c->start, c->n);
		}
		ow_http_membuf_dispose(&s.m);
	}
	/* what went on the wire */
	free(server_stats(&plain, 1));
	struct ow_http_req q = {.range_len = 64, .flags = OW_HTTP_RANGE_SUFFIX, .if_range = big_etag};
	struct sink s = {0};
	assert_int_equal(get_path("/big.bin", &q, &s), 0);
	char *st = server_stats(&plain, 0);
	assert_non_null(strstr(st, "\"range\": \"bytes=-64\""));
	assert_non_null(strstr(st, "\"if_range\": \"\\\""));
	free(st);
	ow_http_membuf_dispose(&s.m);
	/* a changed file (If-Range no longer matches) is a 200 too */
	struct ow_http_req q2 = {.range_len = 64, .flags = OW_HTTP_RANGE_SUFFIX, .if_range = "\"old\""};
	assert_int_equal(get_path("/big.bin", &q2, &s), OW_EUNSUPPORTED);
	assert_true(q2.res.range_ignored);
	assert_non_null(strstr(q2.res.detail, "or the file changed"));
	assert_int_equal(s.m.len, 0);
	ow_http_membuf_dispose(&s.m);
	/* a 206 must carry the validator its If-Range named (a server that
	 * ignores If-Range sends bytes of another version): the ETag, or the date */
	const char *sent[] = {big_etag, big_lastmod};
	for (size_t i = 0; i < 2; i++) {
		struct ow_http_req qv = {.range_off = 100, .range_len = 64, .if_range = sent[i],
		                         .expected_size = BIG_SIZE};
		assert_int_equal(get_path("/big.bin", &qv, &s), 0);
		assert_false(qv.res.validator_changed);
		assert_int_equal(s.m.len, 64);
		ow_http_membuf_dispose(&s.m);
		assert_int_equal(get_path("/fault/ifrange-ignore/big.bin", &qv, &s), OW_EHTTP);
		assert_true(qv.res.validator_changed);
		assert_non_null(strstr(qv.res.detail, "not the If-Range"));
		assert_int_equal(s.m.len, 0);
		ow_http_membuf_dispose(&s.m);
	}
	/* a range is for http(s), never with a resume */
	struct ow_http_req q3 = {.range_len = 64, .resume_from = 10, .if_range = big_etag};
	assert_int_equal(get_path("/big.bin", &q3, &s), OW_EINVAL);
	ow_http_membuf_dispose(&s.m);
}

/* A dropped connection in the middle of a range: asked again, from its start. */
static void test_range_retry(void **state)
{
	(void)state;
	struct ow_http_req q = {.range_off = 1000, .range_len = 150000};
	struct sink s = {0};
	assert_int_equal(get_path("/fault/range-truncate/big.bin?fail=1", &q, &s), 0);
	assert_int_equal(q.res.attempts, 2);
	assert_int_equal(s.m.len, 150000);
	assert_memory_equal(s.m.data, big + 1000, 150000);
	ow_http_membuf_dispose(&s.m);
}

/* ---- engine: parallelism, callbacks, policy ----------------------------------------- */

static void test_parallel_caps(void **state)
{
	(void)state;
	struct ow_http_opts o;
	ow_http *h;
	struct ow_http_req q[12];
	struct sink s[12];
	char url[12][256];
	test_opts(&o);
	o.jobs = 4;
	o.per_host = 2;
	o.allow_ud = (void *)"://localhost:";
	free(server_stats(&plain, 1));
	assert_int_equal(ow_http_new(&h, &o), 0);
	for (int i = 0; i < 12; i++) {
		snprintf(url[i], sizeof url[i], "http://%s:%d/fault/slow/small.txt?delay=0.3",
		         i % 2 ? "localhost" : "127.0.0.1", plain.port);
		memset(&s[i], 0, sizeof s[i]);
		s[i].m.cap = 100;
		q[i] = (struct ow_http_req){.url = url[i], .flags = OW_HTTP_ALLOW_HTTP,
		                            .on_data = sink_data, .ud = &s[i]};
		assert_int_equal(ow_http_add(h, &q[i]), 0);
	}
	assert_int_equal(ow_http_run(h), 0);
	ow_http_free(h);
	for (int i = 0; i < 12; i++) {
		assert_string_equal(s[i].m.data, "hello\n");
		ow_http_membuf_dispose(&s[i].m);
	}
	char *st = server_stats(&plain, 0);
	assert_non_null(strstr(st, "\"max_active\": 4"));
	assert_non_null(strstr(st, "\"127.0.0.1\": 2"));
	assert_non_null(strstr(st, "\"localhost\": 2"));
	free(st);
}

/* Engines run one after the other: each opens its own connection and closes
 * it at its end, unless they share a pool, whose one connection serves them
 * all (a resolve's rounds). */
static void test_pool_keeps_connections(void **state)
{
	(void)state;
	char url[256], want[64];
	url_of(url, sizeof url, &plain, "http", "/small.txt");
	for (int pooled = 0; pooled < 2; pooled++) {
		struct ow_http_opts o;
		ow_http_pool *pool = NULL;
		test_opts(&o);
		if (pooled)
			assert_int_equal(ow_http_pool_new(&pool), 0);
		o.pool = pool;
		free(server_stats(&plain, 1));
		for (int i = 0; i < 3; i++) {
			struct sink s = {0};
			struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
			assert_int_equal(run_one(&o, &q, &s), 0);
			assert_string_equal(s.m.data, "hello\n");
			ow_http_membuf_dispose(&s.m);
		}
		char *st = server_stats(&plain, 0); /* its own connection is counted too */
		snprintf(want, sizeof want, "\"connections\": %d,", (pooled ? 1 : 3) + 1);
		if (!strstr(st, want))
			fail_msg("%s: want %s in %s", pooled ? "pooled" : "alone", want, st);
		free(st);
		ow_http_pool_free(pool);
	}
}

static void test_sink_error_and_cancel(void **state)
{
	(void)state;
	struct ow_http_req q = {0};
	struct sink s = {.fail_after = 50000};
	assert_int_equal(get_path("/big.bin", &q, &s), OW_ENOSPC);
	assert_non_null(strstr(q.res.detail, "disk full (test)"));
	assert_int_equal(q.res.attempts, 1);
	ow_http_membuf_dispose(&s.m);

	struct ow_http_req q2 = {0};
	struct sink s2 = {.cancel = (ow_http *)&s2}; /* run_one sets the engine */
	assert_int_equal(get_path("/fault/endless/big.bin", &q2, &s2), OW_EINCOMPLETE);
	assert_true(q2.res.bytes > 100000);
	assert_non_null(strstr(q2.res.detail, "cancelled"));
	ow_http_membuf_dispose(&s2.m);
}

static void on_usr1(int sig)
{
	(void)sig;
	ow_interrupt(SIGTERM); /* as the CLI's handler records a SIGTERM */
}

/* ow_interrupt from a signal handler: the running transfer ends with
 * OW_EINTERRUPTED (bytes kept), an engine run afterwards stops at once the
 * same way, and the exit code of OW_EINTERRUPTED is 128 + the signal.
 * Sticky for the process: this test runs last. */
static void test_interrupt_from_a_signal(void **state)
{
	(void)state;
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	assert_false(ow_interrupted());
	assert_int_equal(ow_err_exit_code(OW_EINTERRUPTED), 130); /* the table's, no signal yet */
	struct ow_http_req q = {0};
	struct sink s = {.raise_at = 60000};
	assert_int_equal(get_path("/fault/endless/big.bin", &q, &s), OW_EINTERRUPTED);
	assert_true(ow_interrupted());
	assert_int_equal(ow_interrupted(), SIGTERM);
	assert_int_equal(ow_err_exit_code(OW_EINTERRUPTED), 143);
	assert_true(q.res.bytes >= 60000);
	assert_non_null(strstr(q.res.detail, "interrupted; "));
	ow_http_membuf_dispose(&s.m);
	struct ow_http_req q2 = {0};
	struct sink s2 = {0};
	assert_int_equal(get_path("/big.bin", &q2, &s2), OW_EINTERRUPTED);
	assert_int_equal(q2.res.bytes, 0);
	ow_http_membuf_dispose(&s2.m);
	sigaction(SIGUSR1, &old, NULL);
}

/* ---- the call engine (S3 requests): a failure names its real cause ---------------- */

static int call_url(const char *url, uint64_t max, struct ow_http_call *c, struct sink *s)
{
	struct ow_http_opts o;
	ow_http_conn *k;
	test_opts(&o);
	o.max_attempts = 1;
	assert_int_equal(ow_http_conn_new(&k, &o), 0);
	memset(c, 0, sizeof *c);
	c->method = "GET";
	c->url = url;
	c->flags = OW_HTTP_ALLOW_HTTP;
	c->body_fd = -1;
	c->on_data = sink_data;
	c->on_restart = sink_restart;
	c->ud = s;
	c->max_size = max;
	s->m.cap = 64u << 20;
	int rc = ow_http_call(k, c);
	ow_http_conn_free(k);
	ow_http_membuf_dispose(&s->m);
	return rc;
}

static void test_call_names_cause(void **state)
{
	(void)state;
	struct ow_http_call c;
	struct sink s = {0};
	char url[512];
	url_of(url, sizeof url, &plain, "http", "/fault/stall/big.bin?stall=5");
	assert_int_equal(call_url(url, 0, &c, &s), OW_ETIMEOUT);
	assert_non_null(strstr(c.detail, "stalled after 100000 bytes (HTTP 200, no data for 1 s)"));
	assert_null(strstr(c.detail, "Operation too slow"));

	url_of(url, sizeof url, &plain, "http", "/big.bin");
	assert_int_equal(call_url(url, 1000, &c, &s), OW_ETOOBIG);
	assert_non_null(strstr(c.detail, "over the 1000-byte cap (HTTP 200)"));

	/* the password of a URL's userinfo is never in a message */
	snprintf(url, sizeof url, "http://alice:SECRET@127.0.0.1:%d/missing.bin", plain.port);
	assert_int_equal(call_url(url, 0, &c, &s), OW_ENOENT);
	assert_null(strstr(c.detail, "SECRET"));
	assert_null(strstr(ow_err_detail(), "SECRET"));
	assert_non_null(strstr(c.detail, "http://***@127.0.0.1:"));
	snprintf(url, sizeof url, "http://alice:SECRET@127.0.0.1:1/x");
	assert_true(call_url(url, 0, &c, &s) < 0); /* connection refused */
	assert_null(strstr(c.detail, "SECRET"));
}

static struct ow_http_req chained;
static struct sink chained_sink;
static char chained_url[256];

static void add_more(void *ud, struct ow_http_req *req)
{
	ow_http *h = ud;
	assert_int_equal(req->res.rc, 0);
	url_of(chained_url, sizeof chained_url, &plain, "http", "/small.txt");
	chained = (struct ow_http_req){.url = chained_url, .flags = OW_HTTP_ALLOW_HTTP,
	                               .on_data = sink_data, .ud = &chained_sink};
	chained_sink.m.cap = 100;
	assert_int_equal(ow_http_add(h, &chained), 0);
}

static int discard(void *ud, const void *buf, size_t len)
{
	(void)ud, (void)buf, (void)len;
	return 0;
}

static void test_add_from_on_done(void **state)
{
	(void)state;
	struct ow_http_opts o;
	ow_http *h;
	char url[256];
	test_opts(&o);
	assert_int_equal(ow_http_new(&h, &o), 0);
	url_of(url, sizeof url, &plain, "http", "/small.txt");
	struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP, .on_data = discard,
	                        .on_done = add_more, .ud = h};
	/* on_done gets ud = h; the sink ignores it */
	assert_int_equal(ow_http_add(h, &q), 0);
	assert_int_equal(ow_http_run(h), 0);
	ow_http_free(h);
	assert_int_equal(chained.res.rc, 0);
	assert_string_equal(chained_sink.m.data, "hello\n");
	ow_http_membuf_dispose(&chained_sink.m);
}

static void test_policy_first_url(void **state)
{
	(void)state;
	struct ow_http_opts o;
	char url[512];
	struct sink s = {0};
	test_opts(&o);
	url_of(url, sizeof url, &plain, "http", "/small.txt");
	struct ow_http_req q = {.url = url}; /* http without ALLOW_HTTP */
	assert_int_equal(run_one(&o, &q, &s), OW_EPOLICY);
	assert_non_null(strstr(q.res.detail, "scheme http not allowed"));

	snprintf(url, sizeof url, "http://localhost:%d/small.txt", plain.port);
	struct ow_http_req q2 = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
	assert_int_equal(run_one(&o, &q2, &s), OW_EPOLICY);
	assert_non_null(strstr(q2.res.detail, "host not allowed"));

	snprintf(url, sizeof url, "file://%s/small.txt", root);
	struct ow_http_req q3 = {.url = url};
	assert_int_equal(run_one(&o, &q3, &s), OW_EPOLICY);
	struct ow_http_req q4 = {.url = url, .flags = OW_HTTP_ALLOW_FILE};
	o.allow_url = NULL;
	assert_int_equal(run_one(&o, &q4, &s), 0);
	assert_string_equal(s.m.data, "hello\n");
	snprintf(url, sizeof url, "file://%s/missing", root);
	struct ow_http_req q5 = {.url = url, .flags = OW_HTTP_ALLOW_FILE};
	assert_int_equal(run_one(&o, &q5, &s), OW_ENOENT);
	struct ow_http_req q6 = {.url = "ftp://127.0.0.1/x"};
	assert_int_equal(run_one(&o, &q6, &s), OW_EPOLICY);
	ow_http_membuf_dispose(&s.m);
}

/* Logins (offwheel/logins.h): the one for the URL's own scheme, host and
 * port goes with each request and hop, none across a redirect to another
 * host; 401 and 403 say who asks and where a login is given. */
static void test_logins(void **state)
{
	(void)state;
	ow_logins *l;
	struct ow_http_opts o;
	char url[512], *bare = NULL;
	test_opts(&o);
	o.allow_ud = "localhost";
	assert_int_equal(ow_logins_new(&l), 0);
	snprintf(url, sizeof url, "http://alice:s%%40cret@127.0.0.1:%d/", plain.port);
	assert_int_equal(ow_logins_take_url(l, url, &bare), 0);
	free(bare);
	const char *paths[] = {"/fault/echo-auth/small.txt",
	                       "/fault/redirect/fault/echo-auth/small.txt?n=1",
	                       "/fault/redirect-other-host/fault/echo-auth/small.txt"};
	const char *want[] = {"Basic YWxpY2U6c0BjcmV0\n", "Basic YWxpY2U6c0BjcmV0\n", "none\n"};
	for (int withl = 0; withl < 2; withl++)
		for (size_t i = 0; i < 3; i++) {
			struct sink s = {0};
			o.logins = withl ? l : NULL;
			url_of(url, sizeof url, &plain, "http", paths[i]);
			struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
			int rc = run_one(&o, &q, &s);
			if (rc) print_message("%s\n", q.res.detail);
			assert_int_equal(rc, 0);
			assert_string_equal(s.m.data, withl ? want[i] : "none\n");
			assert_null(strstr(q.res.effective_url, "@")); /* libcurl's own word kept out */
			ow_http_membuf_dispose(&s.m);
		}
	char hp[64], req[512], refused401[256], refused403[256];
	snprintf(hp, sizeof hp, "127.0.0.1:%d", plain.port);
	snprintf(req, sizeof req, "authentication required by %s (HTTP 401): give credentials in "
	         "~/.netrc (machine 127.0.0.1 login USER password PASS) or in the URL "
	         "(http://USER:PASS@%s/...)", hp, hp);
	snprintf(refused401, sizeof refused401, "credentials refused by %s (HTTP 401): the login "
	         "the URL gives", hp);
	snprintf(refused403, sizeof refused403, "credentials refused by %s (HTTP 403)", hp);
	struct {
		const char *path;
		int with, rc;
		const char *says;
	} st[] = {
	    {"/fault/401/small.txt", 0, OW_EAUTH, req},
	    {"/fault/401/small.txt", 1, OW_EAUTH, refused401},
	    {"/fault/403/small.txt", 1, OW_EAUTH, refused403},
	    {"/fault/403/small.txt", 0, OW_ENOENT, "not found (HTTP 403)"},
	};
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
		struct sink s = {0};
		o.logins = st[i].with ? l : NULL;
		url_of(url, sizeof url, &plain, "http", st[i].path);
		struct ow_http_req q = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
		assert_int_equal(run_one(&o, &q, &s), st[i].rc);
		assert_non_null(strstr(q.res.detail, st[i].says));
		assert_null(strstr(q.res.detail, "cret"));
		assert_int_equal(q.res.attempts, 1); /* never retried */
		ow_http_membuf_dispose(&s.m);
	}
	ow_logins_free(l);
}

static void test_bad_options(void **state)
{
	(void)state;
	struct ow_http_opts o;
	ow_http *h = (ow_http *)&o;
	ow_http_opts_default(&o);
	o.jobs = 0;
	assert_int_equal(ow_http_new(&h, &o), OW_EINVAL);
	assert_null(h);
	ow_http_opts_default(&o);
	o.ca_file = "/nonexistent/ca.pem";
	assert_int_equal(ow_http_new(&h, &o), OW_EINVAL);
	assert_non_null(strstr(ow_err_detail(), "/nonexistent/ca.pem"));
	ow_http_free(NULL);
}

/* ---- TLS ------------------------------------------------------------------------------ */

struct tls_case {
	const char *cert;
	int use_ca;
	int rc;
	const char *detail;
};

static void test_tls(void **state)
{
	(void)state;
	static const struct tls_case cases[] = {
		{"server.pem", 1, 0, NULL},
		{"server.pem", 0, OW_ETLS, "--cert"},
		{"untrusted.pem", 1, OW_ETLS, "TLS failed"},
		{"wrongname.pem", 1, OW_ETLS, "TLS failed"},
		{"expired.pem", 1, OW_ETLS, "expired"},
	};
	char cmd[1024], ca[512], url[256];
	certs = tu_mkdtemp();
	char *mk = tool_path("mkcerts.sh");
	snprintf(cmd, sizeof cmd, "sh '%s' '%s'", mk, certs);
	free(mk);
	assert_int_equal(system(cmd), 0);
	snprintf(ca, sizeof ca, "%s/ca.pem", certs);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct tls_case *c = &cases[i];
		struct server srv = {0};
		struct ow_http_opts o;
		struct sink s = {0};
		assert_int_equal(start_server(&srv, c->cert), 0);
		test_opts(&o);
		o.ca_file = c->use_ca ? ca : NULL;
		url_of(url, sizeof url, &srv, "https", "/big.bin");
		struct ow_http_req q = {.url = url};
		int rc = run_one(&o, &q, &s);
		if (rc != c->rc || (c->detail && !strstr(q.res.detail, c->detail)))
			fail_msg("%s: rc %s: %s", c->cert, ow_err_name(rc), q.res.detail);
		if (!rc) {
			assert_big(&s);
			/* a redirect from https to http is refused even for trusted http */
			url_of(url, sizeof url, &srv, "https", "/fault/redirect-http/big.bin");
			struct ow_http_req q2 = {.url = url, .flags = OW_HTTP_ALLOW_HTTP};
			assert_int_equal(run_one(&o, &q2, &s), OW_EPOLICY);
			assert_non_null(strstr(q2.res.detail, "scheme http not allowed"));
			/* SSL_CERT_FILE is the fallback CA file */
			setenv("SSL_CERT_FILE", ca, 1);
			o.ca_file = NULL;
			url_of(url, sizeof url, &srv, "https", "/big.bin");
			struct ow_http_req q3 = {.url = url};
			assert_int_equal(run_one(&o, &q3, &s), 0);
			unsetenv("SSL_CERT_FILE");
		}
		ow_http_membuf_dispose(&s.m);
		stop_server(&srv);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_get),
		cmocka_unit_test(test_conditional_304),
		cmocka_unit_test(test_get_buffer_and_cap),
		cmocka_unit_test(test_transient_faults_recover),
		cmocka_unit_test(test_persistent_faults_fail_clearly),
		cmocka_unit_test(test_redirects_followed_when_allowed),
		cmocka_unit_test(test_retry_after_honoured),
		cmocka_unit_test(test_retry_budget),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_validators_and_framing),
		cmocka_unit_test(test_resume_with_right_206),
		cmocka_unit_test(test_resume_restarts),
		cmocka_unit_test(test_resume_basis),
		cmocka_unit_test(test_resume_without_validators),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_range_retry),
		cmocka_unit_test(test_parallel_caps),
		cmocka_unit_test(test_pool_keeps_connections),
		cmocka_unit_test(test_sink_error_and_cancel),
		cmocka_unit_test(test_add_from_on_done),
		cmocka_unit_test(test_call_names_cause),
		cmocka_unit_test(test_policy_first_url),
		cmocka_unit_test(test_logins),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_interrupt_from_a_signal), /* last: it is sticky */
	};
	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
