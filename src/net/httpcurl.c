/* httpcurl.c - libcurl, loaded on first use, and what both of its users
 * (the transfer engine and the single-request client) judge alike: curl's
 * codes for TLS and for transient trouble, the CA file, a sink's code.
 *
 * libcurl on Debian pulls in about 30 shared libraries (gnutls, kerberos,
 * ldap, ssh, rtmp...) whose loading and constructors cost ~3.5 ms at every
 * start (measured: an empty program linked with -lcurl starts in 6.0 ms,
 * 2.4 ms without).  Only the commands that go to the network need it, so the
 * few entry points used are resolved with dlopen when the first engine or
 * connection is created: offline commands (audit, verify, ls, export,
 * check, smoke) never load it.  OFFWHEEL_LIBCURL names another libcurl (path
 * or soname). */
#define OW_HTTPCURL_LOADER 1
#include "httpcurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsbeneath.h"
#include "offwheel/error.h"

struct ow_http_curl_api ow_http_curl;

static char curl_why[512];
static int curl_ok; /* every entry point resolved */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static const char *curl_lib_name(void)
{
	const char *env = getenv("OFFWHEEL_LIBCURL");
	return env && *env ? env : OW_CURL_SONAME;
}

static void curl_load(void)
{
	void *h = dlopen(curl_lib_name(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(curl_why, sizeof curl_why, "%s", e ? e : "not found");
		return;
	}
	struct ow_http_curl_api api;
#define OW_CURL_SYM(name, ret, args)                                                         \
	if (!(*(void **)&api.name = dlsym(h, #name))) {                                          \
		snprintf(curl_why, sizeof curl_why, "it has no %s (libcurl older than 7.80?)", #name); \
		return;                                                                          \
	}
	OW_CURL_FUNCS(OW_CURL_SYM)
#undef OW_CURL_SYM
	ow_http_curl = api;
	curl_ok = 1;
}

/* 0, or an error naming the library, the cause and what to install. */
static int curl_loaded(void)
{
	if (curl_ok)
		return 0;
	return ow_err(OW_EUNSUPPORTED,
	              "cannot load %s, which offwheel needs for the network: %s — install "
	              "libcurl 7.80 or newer (Debian/Ubuntu: apt-get install libcurl4) or point "
	              "OFFWHEEL_LIBCURL at one; offline commands work without it",
	              curl_lib_name(), curl_why);
}

static void global_init(void)
{
	curl_load();
	if (curl_ok)
		global_rc = ow_http_curl.curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The message of a failure is recorded on the calling thread. */
int ow_http_curl_ready(void)
{
	pthread_once(&global_once, global_init);
	int rc = curl_loaded();
	if (rc)
		return rc;
	if (global_rc != CURLE_OK)
		return ow_err(OW_EINTERNAL, "libcurl initialisation failed: %s",
		              ow_http_curl.curl_easy_strerror(global_rc));
	return 0;
}

int ow_http_curl_tls_error(CURLcode c)
{
	switch (c) {
	case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM: case CURLE_SSL_CIPHER: case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR: case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS: case CURLE_SSL_CRL_BADFILE:
	case CURLE_USE_SSL_FAILED: case CURLE_SSL_ENGINE_INITFAILED:
		return 1;
	default:
		return 0;
	}
}

int ow_http_curl_transient(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_CONNECT: case CURLE_PARTIAL_FILE: case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING: case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

int ow_http_pick_ca_file(const struct ow_http_opts *o, char **out)
{
	const char *ca = o->ca_file ? o->ca_file : getenv("SSL_CERT_FILE");
	*out = NULL;
	if (!ca || !*ca)
		return 0;
	struct stat st;
	int fd, rc = ow_open_regular(ca, &fd, &st); /* OpenSSL's read of a FIFO would block */
	if (rc == OW_EPOLICY) {
		char why[512];
		snprintf(why, sizeof why, "%s", ow_err_detail());
		return ow_err(OW_EINVAL, "CA file %s — pass a PEM file with --cert (or fix "
		              "SSL_CERT_FILE)", why);
	}
	if (rc)
		return ow_err(OW_EINVAL, "CA file %s cannot be read — pass an existing PEM file "
		              "with --cert (or fix SSL_CERT_FILE)", ca);
	close(fd);
	*out = strdup(ca);
	return *out ? 0 : ow_err(OW_ENOMEM, "out of memory");
}

void ow_http_curl_common(CURL *e, const struct ow_http_opts *o, const char *ca_file,
                         const char *user_agent)
{
	CURLcode (*set)(CURL *, CURLoption, ...) = ow_http_curl.curl_easy_setopt;
	set(e, CURLOPT_NOSIGNAL, 1L);
	set(e, CURLOPT_FOLLOWLOCATION, 0L);
	set(e, CURLOPT_SSL_VERIFYPEER, 1L);
	set(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca_file)
		set(e, CURLOPT_CAINFO, ca_file);
	set(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	set(e, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
	set(e, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s);
	set(e, CURLOPT_TIMEOUT_MS, o->attempt_timeout_ms);
	set(e, CURLOPT_USERAGENT, user_agent);
	/* large receive buffers: fewer callbacks per byte (curl's own tool uses 100 kB) */
	set(e, CURLOPT_BUFFERSIZE, 256L * 1024);
	set(e, CURLOPT_TCP_KEEPALIVE, 1L);
}

int ow_http_sink_code(int rc)
{
	return rc > OW__ERROR_BASE && rc < OW__ERROR_END ? rc : OW_EIO;
}
