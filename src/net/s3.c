/* s3.c - the S3 requests an export needs (s3.h): list, put (single and
 * multipart, checksummed), head, get, delete, abort unfinished uploads. */
#include "s3.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "digest.h"
#include "fmt.h"
#include "fsutil.h"
#include "offwheel/error.h"
#include "s3xml.h"
#include "url.h"

int ow_s3_is_url(const char *s)
{
	return s && !strncmp(s, "s3://", 5);
}

/* ---- target, endpoint, credentials -------------------------------------------- */

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	size_t k = 0;
	while (s[k] && isspace((unsigned char)s[k]))
		k++;
	memmove(s, s + k, strlen(s + k) + 1);
}

/* key = value of [profile] in an INI file; 1 found, 0 not, <0 error. */
static int ini_get(const char *path, const char *profile, const char *key, char *out, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[4096];
	int in = 0, found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		trim(line);
		if (line[0] == '[') {
			char *e = strchr(line, ']');
			if (e)
				*e = '\0';
			char *name = line + 1;
			trim(name);
			if (!strncmp(name, "profile ", 8)) {
				name += 8;
				trim(name);
			}
			in = !strcmp(name, profile);
			continue;
		}
		if (!in || line[0] == '#' || line[0] == ';')
			continue;
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		char *k = line, *v = eq + 1;
		trim(k);
		trim(v);
		if (!strcmp(k, key) && strlen(v) < n) {
			memcpy(out, v, strlen(v) + 1);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int load_creds(struct ow_s3 *s, int need)
{
	const char *ak = env("AWS_ACCESS_KEY_ID"), *sk = env("AWS_SECRET_ACCESS_KEY");
	const char *tok = env("AWS_SESSION_TOKEN");
	const char *profile = env("AWS_PROFILE") ? env("AWS_PROFILE") : "default";
	char file[1024], akb[256], skb[256], tokb[2048], reg[64];
	const char *home = env("HOME");
	if (env("AWS_SHARED_CREDENTIALS_FILE"))
		snprintf(file, sizeof file, "%s", env("AWS_SHARED_CREDENTIALS_FILE"));
	else
		snprintf(file, sizeof file, "%s/.aws/credentials", home ? home : "");
	const char *region = env("AWS_REGION") ? env("AWS_REGION") : env("AWS_DEFAULT_REGION");
	if ((!ak || !sk) && ini_get(file, profile, "aws_access_key_id", akb, sizeof akb) == 1 &&
	    ini_get(file, profile, "aws_secret_access_key", skb, sizeof skb) == 1) {
		ak = akb;
		sk = skb;
		tok = ini_get(file, profile, "aws_session_token", tokb, sizeof tokb) == 1 ? tokb : NULL;
	} else if (ak && !sk) {
		return ow_err(OW_ENOENT, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not — set "
		                         "both (or neither, to use %s)", file);
	}
	if (!region && ini_get(file, profile, "region", reg, sizeof reg) == 1)
		region = reg;
	snprintf(s->region, sizeof s->region, "%s", region ? region : "us-east-1");
	for (const char *p = s->region; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return ow_err(OW_EINVAL, "region '%s': not a region name (letters, digits, '-')",
			              s->region);
	snprintf(s->sigv4, sizeof s->sigv4, "aws:amz:%s:s3", s->region);
	if (!ak || !sk) {
		if (need)
			return ow_err(OW_ENOENT, "no S3 credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY "
			                         "are not set and %s has no [%s] section with "
			                         "aws_access_key_id and aws_secret_access_key — set them "
			                         "(or AWS_PROFILE for another section)",
			              file, profile);
		s->anonymous = 1;
		return 0;
	}
	if (strchr(ak, ':') || strlen(ak) + strlen(sk) + 2 > sizeof s->userpwd)
		return ow_err(OW_EINVAL, "the S3 access key id is malformed (it holds ':' or is too long)");
	if (ow_fmt(s->userpwd, sizeof s->userpwd, "%s:%s", ak, sk) < 0) /* no half secret kept */
		return ow_err(OW_EINVAL, "the S3 credentials are too long");
	/* a token that does not fit is refused: dropped, it would make every
	 * request anonymous */
	if (tok && ow_fmt(s->token_hdr, sizeof s->token_hdr, "x-amz-security-token: %s", tok) < 0)
		return ow_err(OW_EINVAL, "the S3 session token is too long (at most %zu bytes)",
		              sizeof s->token_hdr - sizeof "x-amz-security-token: ");
	return 0;
}

static int bucket_ok(const char *b)
{
	size_t n = strlen(b);
	if (n < 3 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)b[i]) && !isdigit((unsigned char)b[i]) && b[i] != '-' &&
		    b[i] != '.')
			return 0;
	return 1;
}

/* A store answers at once or is in trouble: a request is tried at most 4
 * times within 30 s (AWS's SDKs try 3 times), so a store that lost a volume
 * server fails the export in seconds, not minutes, and a re-run resumes. */
static void s3_http_opts(struct ow_s3 *s, const struct ow_http_opts *http)
{
	if (http)
		s->http = *http;
	else
		ow_http_opts_default(&s->http);
	if (s->http.max_attempts > 4)
		s->http.max_attempts = 4;
	if (s->http.retry_budget_ms > 30000)
		s->http.retry_budget_ms = 30000;
}

/* s->prefix from what follows the bucket in `url` (p): "" or "a/b/". */
static int set_prefix(struct ow_s3 *s, const char *url, const char *p)
{
	while (*p == '/')
		p++;
	size_t pl = strlen(p);
	while (pl && p[pl - 1] == '/')
		pl--;
	if (pl + 2 > sizeof s->prefix)
		return ow_err(OW_EINVAL, "%s: prefix too long", url);
	memcpy(s->prefix, p, pl);
	if (pl)
		s->prefix[pl++] = '/';
	s->prefix[pl] = '\0';
	for (const char *q = s->prefix; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f || *q == '\\')
			return ow_err(OW_EINVAL, "%s: the prefix holds a control character or '\\'", url);
	if (strstr(s->prefix, "//") || !strncmp(s->prefix, "./", 2) || strstr(s->prefix, "/./") ||
	    !strncmp(s->prefix, "../", 3) || strstr(s->prefix, "/../"))
		return ow_err(OW_EINVAL, "%s: the prefix has an empty, '.' or '..' component", url);
	return 0;
}

/* s->bucket_url and s->base: the endpoint's (NULL: AWS's) URL of the
 * bucket, whose name is bl bytes long. */
static int set_endpoint(struct ow_s3 *s, const char *endpoint, size_t bl)
{
	if (!endpoint)
		endpoint = env("AWS_ENDPOINT_URL_S3") ? env("AWS_ENDPOINT_URL_S3") : env("AWS_ENDPOINT_URL");
	if (endpoint) {
		char shown[700];
		ow_url_printable(endpoint, shown, sizeof shown);
		size_t el = strlen(endpoint);
		while (el && endpoint[el - 1] == '/')
			el--;
		int http_ok = !strncmp(endpoint, "http://", 7);
		if (!http_ok && strncmp(endpoint, "https://", 8))
			return ow_err(OW_EINVAL, "--endpoint %s: not an http(s) URL (https://HOST[:PORT])",
			              shown);
		if (el + bl + 3 > sizeof s->base)
			return ow_err(OW_EINVAL, "--endpoint %s: too long", shown);
		if (http_ok)
			s->flags |= OW_HTTP_ALLOW_HTTP;
		/* el + bl + 3 <= sizeof base, and bucket_url is no smaller */
		memcpy(s->bucket_url, endpoint, el);
		s->bucket_url[el] = '/';
		memcpy(s->bucket_url + el + 1, s->bucket, bl + 1);
	} else {
		snprintf(s->bucket_url, sizeof s->bucket_url, "https://%s.s3.%s.amazonaws.com", s->bucket,
		         s->region);
	}
	size_t ul = strlen(s->bucket_url);
	if (ul + 2 > sizeof s->base)
		return ow_err(OW_EINVAL, "the S3 URL is too long");
	memcpy(s->base, s->bucket_url, ul);
	s->base[ul] = '/';
	s->base[ul + 1] = '\0';
	return 0;
}

int ow_s3_open(const char *url, const char *endpoint, int need_creds,
               const struct ow_http_opts *http, struct ow_s3 *s)
{
	memset(s, 0, sizeof *s);
	s3_http_opts(s, http);
	if (!ow_s3_is_url(url))
		return ow_err(OW_EINVAL, "%s: not an s3:// URL (s3://BUCKET/PREFIX)", url);
	const char *b = url + 5, *slash = strchr(b, '/');
	size_t bl = slash ? (size_t)(slash - b) : strlen(b);
	if (bl >= sizeof s->bucket)
		bl = sizeof s->bucket - 1;
	memcpy(s->bucket, b, bl);
	s->bucket[bl] = '\0';
	if (!bucket_ok(s->bucket))
		return ow_err(OW_EINVAL, "%s: '%s' is not a bucket name (3-63 lowercase letters, digits, "
		                         "'-' and '.')", url, s->bucket);
	int rc = set_prefix(s, url, slash ? slash + 1 : "");
	if (!rc)
		rc = load_creds(s, need_creds);
	return rc ? rc : set_endpoint(s, endpoint, bl);
}

static int unreserved(int c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

/* Percent-encode `in` (keeping '/' when slash) onto out[*o]. */
static int enc(char *out, size_t n, size_t *o, const char *in, int slash)
{
	static const char hx[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		if (unreserved(*p) || (slash && *p == '/')) {
			if (*o + 1 >= n)
				return -1;
			out[(*o)++] = (char)*p;
		} else {
			if (*o + 3 >= n)
				return -1;
			out[(*o)++] = '%';
			out[(*o)++] = hx[*p >> 4];
			out[(*o)++] = hx[*p & 15];
		}
	}
	out[*o] = '\0';
	return 0;
}

int ow_s3_key_url(const struct ow_s3 *s, const char *key, const char *query, char *out, size_t n)
{
	size_t o = strlen(s->base);
	if (o >= n)
		return ow_err(OW_ETOOBIG, "S3 URL too long");
	memcpy(out, s->base, o + 1);
	if (enc(out, n, &o, s->prefix, 1) || enc(out, n, &o, key, 1))
		return ow_err(OW_ETOOBIG, "S3 URL of %s too long", key);
	if (query) {
		if (o + strlen(query) + 2 > n)
			return ow_err(OW_ETOOBIG, "S3 URL of %s too long", key);
		out[o++] = '?';
		memcpy(out + o, query, strlen(query) + 1);
	}
	return 0;
}

/* ---- requests ------------------------------------------------------------------- */

static const char *const EMPTY_SHA =
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/* Common fields of a call: method, url, signing, the payload hash header. */
static void call_init(const struct ow_s3 *s, struct ow_http_call *c, const char *method,
                      const char *url, char *hdr_sha, size_t hn, const char *sha)
{
	memset(c, 0, sizeof *c);
	c->method = method;
	c->url = url;
	c->flags = s->flags;
	c->body_fd = -1;
	int h = 0;
	if (!s->anonymous) {
		c->aws_sigv4 = s->sigv4;
		c->userpwd = s->userpwd;
		snprintf(hdr_sha, hn, "x-amz-content-sha256: %s", sha ? sha : EMPTY_SHA);
		c->headers[h++] = hdr_sha;
		if (s->token_hdr[0])
			c->headers[h++] = s->token_hdr;
	}
}

static int add_hdr(struct ow_http_call *c, const char *h)
{
	for (int i = 0; i < OW_HTTP_CALL_HEADERS - 1; i++)
		if (!c->headers[i]) {
			c->headers[i] = h;
			return 0;
		}
	return -1;
}

/* Every occurrence of `secret` in s (malloc'd text) shown as "***". */
static void redact(char *s, const char *secret, size_t sl)
{
	char *p;
	if (!s || sl < 4) /* shorter is no credential, and would wreck the text */
		return;
	while ((p = memmem(s, strlen(s), secret, sl)) != NULL) {
		memcpy(p, "***", 3);
		memmove(p + 3, p + sl, strlen(p + sl) + 1);
	}
}

/* A store may echo what it was sent (an access key id, a session token, in
 * a misconfigured one even the secret): never printed. */
static void redact_creds(const struct ow_s3 *s, char *text)
{
	const char *colon = s ? strchr(s->userpwd, ':') : NULL;
	if (!colon)
		return;
	const char *tok = s->token_hdr[0] ? strchr(s->token_hdr, ':') + 2 : "";
	redact(text, colon + 1, strlen(colon + 1));
	redact(text, tok, strlen(tok));
	redact(text, s->userpwd, (size_t)(colon - s->userpwd));
}

void ow_s3_error_text(const struct ow_s3 *s, const char *xml, char *out, size_t n)
{
	struct ow_s3_span all = {xml, xml + strlen(xml)};
	char *code = ow_s3_xml_child(all, "Code"), *msg = ow_s3_xml_child(all, "Message");
	redact_creds(s, code);
	redact_creds(s, msg);
	out[0] = '\0';
	if (code && *code)
		snprintf(out, n, "%.64s%s%.200s", code, msg && *msg ? ": " : "", msg ? msg : "");
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	free(code);
	free(msg);
}

/* A failed call as an error naming the store's reason and what to do. */
static int call_fail(const struct ow_s3 *s, struct ow_http_call *c, int rc, const char *key)
{
	char why[300], where[1400], raw[1400], bucket_url[700];
	ow_s3_error_text(s, c->error_body, why, sizeof why);
	const char *what = key ? key : "the listing";
	int web = !strcmp(s->bucket, "(http)"); /* ow_s3_open_http: a plain web server */
	if (web) {
		snprintf(raw, sizeof raw, "%s%s", s->base, key ? key : "");
		ow_url_printable(raw, where, sizeof where);
	} else {
		snprintf(where, sizeof where, "s3://%s/%s%s", s->bucket, s->prefix, key ? key : "");
	}
	/* no answer at all (refused, unreachable, timed out, retries spent):
	 * the store cannot be reached, an error (exit 1) like a wrong
	 * credential, not an incomplete run; a TLS failure keeps its own code */
	if (!c->status)
		return ow_err(rc == OW_ETLS ? rc : OW_EIO, "%s: %s — check %s and that the %s is up",
		              where, c->detail,
		              web ? "the URL" : "--endpoint", web ? "server" : "store");
	if (c->status >= 200 && c->status <= 299) /* the answer began well, then broke */
		return ow_err(rc, "%s: %s", where, c->detail);
	if (rc == OW_EPOLICY && s->anonymous)
		return ow_err(rc, "%s: %s refused (HTTP %ld%s%s) — it does not allow anonymous reads: "
		                  "give credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) or a URL "
		                  "that does",
		              where, c->method, c->status, *why ? ", " : "", why);
	if (rc == OW_EPOLICY)
		return ow_err(rc, "%s: %s %s refused (HTTP %ld%s%s) — check the credentials "
		                  "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE), the region "
		                  "(%s) and that they may %s in this bucket",
		              where, c->method, what, c->status, *why ? ", " : "", why, s->region,
		              !strcmp(c->method, "GET") || !strcmp(c->method, "HEAD") ? "read" : "write");
	ow_url_printable(s->bucket_url, bucket_url, sizeof bucket_url);
	if (strstr(why, "NoSuchBucket"))
		return ow_err(OW_ENOENT, "s3://%s: no such bucket at %s — create it first (aws s3 mb "
		                         "s3://%s) or check the name and --endpoint",
		              s->bucket, bucket_url, s->bucket);
	return ow_err(rc, "%s: %s failed: HTTP %ld%s%s", where, c->method, c->status,
	              *why ? ", " : "", why);
}

static int membuf_sink(void *ud, const void *buf, size_t len)
{
	return ow_http_membuf_write(ud, buf, len);
}

static int membuf_restart(void *ud)
{
	return ow_http_membuf_restart(ud);
}

static struct ow_s3_span span_of(const struct ow_http_membuf *m)
{
	const char *p = m->data ? m->data : "";
	return (struct ow_s3_span){p, p + m->len};
}

/* Run a call whose answer is a small XML document into m (the failure is
 * named as call_fail names it). */
static int call_mem(ow_http_conn *c, const struct ow_s3 *s, struct ow_http_call *call,
                    const char *key, struct ow_http_membuf *m)
{
	m->cap = 16u << 20;
	call->on_data = membuf_sink;
	call->on_restart = membuf_restart;
	call->ud = m;
	call->max_size = m->cap;
	int rc = ow_http_call(c, call);
	if (rc) {
		ow_http_membuf_dispose(m);
		return call_fail(s, call, rc, key);
	}
	return 0;
}

/* One page of a ListObjectsV2 answer into out; *token the next page's. */
static int list_page(const struct ow_s3 *s, struct ow_s3_span body, struct ow_s3_list *out,
                     size_t *cap, char **token)
{
	struct ow_s3_span root, item;
	*token = NULL;
	if (!ow_s3_xml_next(&body, "ListBucketResult", &root))
		return ow_err(OW_EPARSE, "s3://%s/%s: the listing is not a ListBucketResult — is "
		                         "--endpoint an S3 API endpoint?", s->bucket, s->prefix);
	int rc = 0;
	size_t pl = strlen(s->prefix);
	for (struct ow_s3_span rest = root; !rc && ow_s3_xml_next(&rest, "Contents", &item);) {
		char *key = ow_s3_xml_child(item, "Key"), *size = ow_s3_xml_child(item, "Size"), *end;
		errno = 0;
		unsigned long long sz = size ? strtoull(size, &end, 10) : 0;
		if (!key || !size || strncmp(key, s->prefix, pl) || !key[pl])
			; /* outside the prefix (a hostile listing), the prefix itself, not text */
		else if (errno || *end || end == size || *size == '-')
			rc = ow_err(OW_EPARSE, "s3://%s/%s: size '%.40s' in the listing is not a number",
			            s->bucket, key, size);
		else {
			struct ow_s3_object *nv = ow_array_reserve(out->v, cap, out->n + 1, sizeof *out->v);
			if (nv)
				out->v = nv;
			if (!nv || !(out->v[out->n].key = strdup(key + pl)))
				rc = ow_err(OW_ENOMEM, "out of memory");
			else
				out->v[out->n++].size = sz;
		}
		free(key);
		free(size);
	}
	char *trunc = ow_s3_xml_child(root, "IsTruncated");
	if (!rc && trunc && !strcmp(trunc, "true")) {
		*token = ow_s3_xml_child(root, "NextContinuationToken");
		if (!*token || !**token) {
			free(*token);
			*token = NULL;
			rc = ow_err(OW_EPARSE, "s3://%s/%s: a truncated listing without a continuation "
			                       "token", s->bucket, s->prefix);
		}
	}
	free(trunc);
	return rc;
}

/* Why a listing must stop before the store says it ended, or 0: a store
 * that keeps sending continuation tokens would be listed for hours.  Pages
 * that bring keys (500 or more on average; S3 sends 1000) are honest and
 * earn more pages; keys beyond 10 times the export's files and 100,000
 * others, or a listing over OW_S3_LIST_MAX_S, are not one export's prefix. */
static int list_bounded(const struct ow_s3 *s, size_t expect, size_t pages, size_t keys,
                        int64_t start, const char *token, const char *last)
{
	size_t max_pages = 10 + expect / 100 + keys / 500, max_keys = 10 * expect + 100000;
	double secs = (double)(ow_mono_ms() - start) / 1000.0;
	const char *what = "the listing of s3://";
	if (token && last && !strcmp(token, last))
		return ow_err(OW_EPARSE, "%s%s/%s stopped: the store sent the same continuation "
		              "token twice (page %zu) — it is broken or not an S3 API; check "
		              "--endpoint", what, s->bucket, s->prefix, pages);
	if (token && pages >= max_pages)
		return ow_err(OW_ETOOBIG, "%s%s/%s stopped after %zu pages with %zu keys (at most %zu "
		              "pages expected for an export of %zu files) — the store keeps sending "
		              "continuation tokens; check --endpoint", what, s->bucket, s->prefix,
		              pages, keys, max_pages, expect);
	if (token && keys > max_keys)
		return ow_err(OW_ETOOBIG, "%s%s/%s stopped after %zu keys in %zu pages (at most %zu "
		              "expected for an export of %zu files) — give the export a prefix of "
		              "its own", what, s->bucket, s->prefix, keys, pages, max_keys, expect);
	if (token && secs > OW_S3_LIST_MAX_S)
		return ow_err(OW_ETIMEOUT, "%s%s/%s stopped after %.0f s (%zu pages, %zu keys; the "
		              "limit is %d s) — the store is too slow or keeps sending continuation "
		              "tokens; check --endpoint", what, s->bucket, s->prefix, secs, pages, keys,
		              OW_S3_LIST_MAX_S);
	return 0;
}

int ow_s3_list(ow_http_conn *c, const struct ow_s3 *s, size_t expect,
               struct ow_s3_list *out)
{
	memset(out, 0, sizeof *out);
	size_t cap = 0;
	char *token = NULL, *last = NULL;
	int rc = 0;
	int64_t start = ow_mono_ms();
	for (size_t page = 0; !rc; page++) {
		/* the query's names in sorted order: SigV4 signs them that way */
		char url[4096], hs[128];
		size_t o = (size_t)snprintf(url, sizeof url, "%s?", s->bucket_url);
		if (token) {
			o += (size_t)snprintf(url + o, sizeof url - o, "continuation-token=");
			if (enc(url, sizeof url, &o, token, 0))
				rc = ow_err(OW_ETOOBIG, "s3: continuation token too long");
			o += (size_t)snprintf(url + o, sizeof url - o, "&");
		}
		o += (size_t)snprintf(url + o, sizeof url - o, "list-type=2&prefix=");
		if (!rc && enc(url, sizeof url, &o, s->prefix, 0))
			rc = ow_err(OW_ETOOBIG, "s3: prefix too long");
		free(last);
		last = token;
		token = NULL;
		if (rc)
			break;
		struct ow_http_membuf m = {0};
		struct ow_http_call call;
		call_init(s, &call, "GET", url, hs, sizeof hs, NULL);
		if (!(rc = call_mem(c, s, &call, NULL, &m)))
			rc = list_page(s, span_of(&m), out, &cap, &token);
		ow_http_membuf_dispose(&m);
		if (!rc)
			rc = list_bounded(s, expect, page + 1, out->n, start, token, last);
		if (!token)
			break;
	}
	free(token);
	free(last);
	if (rc)
		ow_s3_list_dispose(out);
	return rc;
}

void ow_s3_list_dispose(struct ow_s3_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].key);
	free(l->v);
	memset(l, 0, sizeof *l);
}

int ow_s3_abort_uploads(ow_http_conn *c, const struct ow_s3 *s,
                        int (*want)(const void *ud, const char *key), const void *ud, size_t *aborted)
{
	char url[4096], hs[128];
	size_t o = (size_t)snprintf(url, sizeof url, "%s?prefix=", s->bucket_url);
	*aborted = 0;
	if (enc(url, sizeof url, &o, s->prefix, 0) || o + 10 > sizeof url)
		return ow_err(OW_ETOOBIG, "s3: prefix too long");
	snprintf(url + o, sizeof url - o, "&uploads=");
	struct ow_http_membuf m = {0};
	struct ow_http_call call;
	call_init(s, &call, "GET", url, hs, sizeof hs, NULL);
	int rc = call_mem(c, s, &call, NULL, &m);
	if (rc)
		return rc;
	struct ow_s3_span rest = span_of(&m), item;
	size_t pl = strlen(s->prefix);
	while (!rc && ow_s3_xml_next(&rest, "Upload", &item)) {
		char *key = ow_s3_xml_child(item, "Key"), *id = ow_s3_xml_child(item, "UploadId");
		if (key && id && !strncmp(key, s->prefix, pl) && want(ud, key + pl)) {
			char q[1200], u[4096];
			size_t qo = (size_t)snprintf(q, sizeof q, "uploadId=");
			if (enc(q, sizeof q, &qo, id, 0) || ow_s3_key_url(s, key + pl, q, u, sizeof u)) {
				rc = ow_err(OW_ETOOBIG, "s3: upload id too long");
			} else {
				call_init(s, &call, "DELETE", u, hs, sizeof hs, NULL);
				int r = ow_http_call(c, &call);
				if (r && r != OW_ENOENT)
					rc = call_fail(s, &call, r, key + pl);
				else
					++*aborted;
			}
		}
		free(key);
		free(id);
	}
	ow_http_membuf_dispose(&m);
	return rc;
}

/* ---- put ------------------------------------------------------------------------ */

/* What an object is written with, single or multipart: its SHA-256 (HEAD
 * gives it back), its type, and the key id of the export that wrote it. */
struct obj_hdrs {
	char meta[96], type[160];
};

static void object_headers(const struct ow_s3 *s, struct ow_http_call *c, struct obj_hdrs *h,
                           const char *sha256, const char *content_type)
{
	snprintf(h->meta, sizeof h->meta, "x-amz-meta-sha256: %s", sha256);
	snprintf(h->type, sizeof h->type, "Content-Type: %s", content_type);
	add_hdr(c, h->meta);
	add_hdr(c, h->type);
	if (s->owner_hdr[0])
		add_hdr(c, s->owner_hdr);
}

static int put_single(ow_http_conn *c, const struct ow_s3 *s,
                      const struct ow_s3_put_req *o)
{
	char url[4096], hs[128], hck[96];
	uint8_t d[32];
	char b64[45];
	int rc = ow_s3_key_url(s, o->key, NULL, url, sizeof url);
	if (rc || (rc = ow_sha256_from_hex(o->sha256, d)))
		return rc;
	ow_b64_encode(d, 32, b64, sizeof b64);
	struct ow_http_call call;
	struct obj_hdrs oh;
	call_init(s, &call, "PUT", url, hs, sizeof hs, o->sha256);
	snprintf(hck, sizeof hck, "x-amz-checksum-sha256: %s", b64);
	add_hdr(&call, hck);
	object_headers(s, &call, &oh, o->sha256, o->content_type);
	call.body = o->body;
	call.body_fd = o->fd;
	call.body_off = o->off;
	call.body_len = o->len;
	rc = ow_http_call(c, &call);
	return rc ? call_fail(s, &call, rc, o->key) : 0;
}

struct part {
	char etag[256];
	char b64[45];
};

static int mp_create(ow_http_conn *c, const struct ow_s3 *s, const char *key,
                     const char *sha256, const char *content_type, char **upload_id)
{
	char url[4096], hs[128];
	int rc = ow_s3_key_url(s, key, "uploads=", url, sizeof url);
	if (rc)
		return rc;
	struct ow_http_membuf m = {0};
	struct ow_http_call call;
	struct obj_hdrs oh;
	call_init(s, &call, "POST", url, hs, sizeof hs, NULL);
	add_hdr(&call, "x-amz-checksum-algorithm: SHA256");
	object_headers(s, &call, &oh, sha256, content_type);
	if ((rc = call_mem(c, s, &call, key, &m)))
		return rc;
	*upload_id = ow_s3_xml_child(span_of(&m), "UploadId");
	ow_http_membuf_dispose(&m);
	if (!*upload_id || !**upload_id) {
		free(*upload_id);
		*upload_id = NULL;
		return ow_err(OW_EPARSE, "s3://%s/%s%s: the store started a multipart upload without "
		                         "an UploadId", s->bucket, s->prefix, key);
	}
	return 0;
}

/* A multipart upload under way: the object, its upload id (as a query) and
 * the buffer a part read from a file goes through. */
struct upload {
	const struct ow_s3_put_req *o;
	const char *qid;
	char *buf;
};

/* Part num (from 1), len bytes at off of the object: read it (once), hash
 * it, send it with its checksums. */
static int mp_part(ow_http_conn *c, const struct ow_s3 *s, const struct upload *u,
                   unsigned num, uint64_t off, uint64_t len, struct part *pt)
{
	char url[4096], q[1400], hs[128], hck[96];
	uint8_t d[32];
	char hex[65];
	const char *key = u->o->key, *qid = u->qid;
	const void *data = u->o->body ? (const char *)u->o->body + off : u->buf;
	if (!u->o->body && (ow_pread_all(u->o->fd, u->buf, (size_t)len, u->o->off + off)))
		return ow_err_prefix(OW_EIO, "%s: ", key);
	ow_sha256_buf(data, (size_t)len, d);
	ow_hex(d, 32, hex);
	ow_b64_encode(d, 32, pt->b64, sizeof pt->b64);
	snprintf(q, sizeof q, "partNumber=%u&%s", num, qid);
	int rc = ow_s3_key_url(s, key, q, url, sizeof url);
	if (rc)
		return rc;
	struct ow_http_call call;
	call_init(s, &call, "PUT", url, hs, sizeof hs, hex);
	snprintf(hck, sizeof hck, "x-amz-checksum-sha256: %s", pt->b64);
	add_hdr(&call, hck);
	call.body = data;
	call.body_len = len;
	call.capture[0] = "ETag";
	rc = ow_http_call(c, &call);
	if (rc)
		return call_fail(s, &call, rc, key);
	if (!call.captured[0][0])
		return ow_err(OW_EPARSE, "s3://%s/%s%s: part %u was stored without an ETag", s->bucket,
		              s->prefix, key, num);
	snprintf(pt->etag, sizeof pt->etag, "%s", call.captured[0]);
	return 0;
}

static int mp_complete(ow_http_conn *c, const struct ow_s3 *s, const char *key,
                       const char *qid, const struct part *pt, unsigned n)
{
	struct ow_str x = {0};
	ow_str_printf(&x, "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
	for (unsigned i = 0; i < n; i++) {
		ow_str_printf(&x, "<Part><PartNumber>%u</PartNumber><ETag>", i + 1);
		for (const char *e = pt[i].etag; *e; e++) /* XML-escaped: quotes and all */
			if (*e == '"')
				ow_str_puts(&x, "&quot;");
			else if (*e == '&')
				ow_str_puts(&x, "&amp;");
			else if (*e == '<')
				ow_str_puts(&x, "&lt;");
			else
				ow_str_put(&x, e, 1);
		ow_str_printf(&x, "</ETag><ChecksumSHA256>%s</ChecksumSHA256></Part>", pt[i].b64);
	}
	ow_str_puts(&x, "</CompleteMultipartUpload>");
	if (x.err) {
		ow_str_dispose(&x);
		return ow_err(OW_ENOMEM, "out of memory");
	}
	uint8_t d[32];
	char hex[65], url[4096], hs[128];
	ow_sha256_buf(x.p, x.n, d);
	ow_hex(d, 32, hex);
	int rc = ow_s3_key_url(s, key, qid, url, sizeof url);
	struct ow_http_membuf m = {0};
	struct ow_http_call call;
	struct ow_s3_span err;
	if (!rc) {
		call_init(s, &call, "POST", url, hs, sizeof hs, hex);
		add_hdr(&call, "Content-Type: application/xml");
		call.body = x.p;
		call.body_len = x.n;
		rc = call_mem(c, s, &call, key, &m);
		/* S3 may answer 200 with an <Error> body when completing */
		struct ow_s3_span body = span_of(&m);
		if (!rc && ow_s3_xml_next(&body, "Error", &err)) {
			snprintf(call.error_body, sizeof call.error_body, "%s", m.data);
			call.status = 500;
			rc = call_fail(s, &call, OW_EHTTP, key);
		}
	}
	ow_http_membuf_dispose(&m);
	ow_str_dispose(&x);
	return rc;
}

static void mp_abort(ow_http_conn *c, const struct ow_s3 *s, const char *key,
                     const char *qid)
{
	char url[4096], hs[128];
	struct ow_http_call call;
	if (ow_s3_key_url(s, key, qid, url, sizeof url))
		return;
	char *keep = strdup(ow_err_detail());
	call_init(s, &call, "DELETE", url, hs, sizeof hs, NULL);
	ow_http_call(c, &call); /* best effort: the next run aborts what is left */
	ow_err(OW_EIO, "%s", keep ? keep : "out of memory");
	free(keep);
}

static int put_multipart(ow_http_conn *c, const struct ow_s3 *s,
                         const struct ow_s3_put_req *o)
{
	const char *key = o->key;
	uint64_t psz = OW_S3_PART_SIZE, len = o->len;
	while ((len + psz - 1) / psz > OW_S3_MAX_PARTS)
		psz *= 2;
	unsigned n = (unsigned)((len + psz - 1) / psz);
	struct part *pt = calloc(n, sizeof *pt);
	char *buf = o->body ? NULL : malloc((size_t)psz);
	char *id = NULL;
	if (!pt || (!o->body && !buf)) {
		free(pt);
		free(buf);
		return ow_err(OW_ENOMEM, "%s: out of memory for a %llu-byte part", key,
		              (unsigned long long)psz);
	}
	int rc = mp_create(c, s, key, o->sha256, o->content_type, &id);
	char qid[1200];
	size_t qo = (size_t)snprintf(qid, sizeof qid, "uploadId=");
	if (!rc && enc(qid, sizeof qid, &qo, id, 0))
		rc = ow_err(OW_ETOOBIG, "s3: upload id too long");
	struct upload u = {.o = o, .qid = qid, .buf = buf};
	for (unsigned i = 0; !rc && i < n; i++) {
		uint64_t po = (uint64_t)i * psz, pl = len - po < psz ? len - po : psz;
		rc = mp_part(c, s, &u, i + 1, po, pl, &pt[i]);
	}
	if (!rc)
		rc = mp_complete(c, s, key, qid, pt, n);
	if (rc && id)
		mp_abort(c, s, key, qid);
	free(id);
	free(pt);
	free(buf);
	return rc;
}

int ow_s3_put(ow_http_conn *c, const struct ow_s3 *s, const struct ow_s3_put_req *o)
{
	return o->len > OW_S3_PART_SIZE ? put_multipart(c, s, o) : put_single(c, s, o);
}

int ow_s3_head(ow_http_conn *c, const struct ow_s3 *s, const char *key, uint64_t *size,
               char sha256[65], char owner[32])
{
	char url[4096], hs[128];
	int rc = ow_s3_key_url(s, key, NULL, url, sizeof url);
	if (rc)
		return rc;
	struct ow_http_call call;
	call_init(s, &call, "HEAD", url, hs, sizeof hs, NULL);
	add_hdr(&call, "x-amz-checksum-mode: ENABLED");
	call.capture[0] = "Content-Length";
	call.capture[1] = "x-amz-meta-sha256";
	call.capture[2] = "x-amz-checksum-sha256";
	call.capture[3] = "x-amz-meta-offwheel-key";
	rc = ow_http_call(c, &call);
	if (rc == OW_ENOENT)
		return rc;
	if (rc)
		return call_fail(s, &call, rc, key);
	*size = strtoull(call.captured[0], NULL, 10);
	if (owner)
		snprintf(owner, 32, "%.31s", call.captured[3]);
	sha256[0] = '\0';
	/* the store's own checksum (it computed it on receipt) before the
	 * metadata the uploader wrote; a multipart object's is a checksum of
	 * part checksums ("...-N"), which does not decode to 32 bytes */
	uint8_t d[32];
	if (!ow_b64_decode(call.captured[2], strlen(call.captured[2]), d, sizeof d))
		ow_hex(d, sizeof d, sha256);
	else if (ow_is_sha256_hex(call.captured[1]))
		memcpy(sha256, call.captured[1], 65);
	return 0;
}

int ow_s3_delete(ow_http_conn *c, const struct ow_s3 *s, const char *key)
{
	char url[4096], hs[128];
	int rc = ow_s3_key_url(s, key, NULL, url, sizeof url);
	if (rc)
		return rc;
	struct ow_http_call call;
	call_init(s, &call, "DELETE", url, hs, sizeof hs, NULL);
	rc = ow_http_call(c, &call);
	return rc && rc != OW_ENOENT ? call_fail(s, &call, rc, key) : 0;
}

int ow_s3_get(ow_http_conn *c, const struct ow_s3 *s, const char *key,
              int (*on_data)(void *ud, const void *buf, size_t len), int (*on_restart)(void *ud),
              void *ud, uint64_t max)
{
	char url[4096], hs[128];
	int rc = ow_s3_key_url(s, key, NULL, url, sizeof url);
	if (rc)
		return rc;
	struct ow_http_call call;
	call_init(s, &call, "GET", url, hs, sizeof hs, NULL);
	call.on_data = on_data;
	call.on_restart = on_restart;
	call.ud = ud;
	call.max_size = max;
	rc = ow_http_call(c, &call);
	if (rc == OW_ENOENT)
		return ow_err(rc, "s3://%s/%s%s: not found", s->bucket, s->prefix, key);
	return rc ? call_fail(s, &call, rc, key) : 0;
}

int ow_s3_open_http(const char *url, const struct ow_http_opts *http, struct ow_s3 *s)
{
	memset(s, 0, sizeof *s);
	s3_http_opts(s, http);
	char shown[700];
	ow_url_printable(url, shown, sizeof shown);
	int plain = !strncmp(url, "http://", 7);
	if (!plain && strncmp(url, "https://", 8))
		return ow_err(OW_EINVAL, "%s: not an http(s):// or s3:// URL", shown);
	size_t n = strlen(url);
	while (n && url[n - 1] == '/')
		n--;
	if (n + 2 > sizeof s->base)
		return ow_err(OW_EINVAL, "%s: URL too long", shown);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f || url[i] == '?' || url[i] == '#')
			return ow_err(OW_EINVAL, "%s: the URL holds a space, a control character, '?' or "
			                         "'#' — give the URL of the export's directory", shown);
	memcpy(s->bucket_url, url, n);
	memcpy(s->base, url, n);
	s->base[n] = '/';
	s->base[n + 1] = '\0';
	snprintf(s->bucket, sizeof s->bucket, "%s", "(http)");
	s->anonymous = 1;
	if (plain)
		s->flags |= OW_HTTP_ALLOW_HTTP;
	return 0;
}
