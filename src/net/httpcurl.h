/* httpcurl.h - libcurl as the http modules see it (not a public API).
 *
 * The one header of the library that includes <curl/curl.h>; http.c (the
 * transfer engine), httpcall.c (single requests) and httpcurl.c (the
 * loader) include it, nothing else does (tests/layering/third_party.py).
 * libcurl is not linked but loaded on first use (httpcurl.c says why):
 * after this header the usual curl_* names call through the table of
 * entry points that ow_http_curl_ready() fills. */
#ifndef OW_HTTPCURL_H
#define OW_HTTPCURL_H

#define CURL_DISABLE_TYPECHECK 1 /* its macros would wrap the pointers below */
#include <curl/curl.h>
#include <time.h>

#include "offwheel/http.h"

#ifndef OW_CURL_SONAME
#define OW_CURL_SONAME "libcurl.so.4"
#endif

/* X(name, return type, parameters) for every libcurl function used here */
#define OW_CURL_FUNCS(X)                                                          \
	X(curl_global_init, CURLcode, (long))                                         \
	X(curl_easy_init, CURL *, (void))                                             \
	X(curl_easy_setopt, CURLcode, (CURL *, CURLoption, ...))                      \
	X(curl_easy_getinfo, CURLcode, (CURL *, CURLINFO, ...))                       \
	X(curl_easy_cleanup, void, (CURL *))                                          \
	X(curl_easy_perform, CURLcode, (CURL *))                                      \
	X(curl_easy_reset, void, (CURL *))                                            \
	X(curl_easy_strerror, const char *, (CURLcode))                               \
	X(curl_multi_init, CURLM *, (void))                                           \
	X(curl_multi_setopt, CURLMcode, (CURLM *, CURLMoption, ...))                  \
	X(curl_multi_add_handle, CURLMcode, (CURLM *, CURL *))                        \
	X(curl_multi_remove_handle, CURLMcode, (CURLM *, CURL *))                     \
	X(curl_multi_perform, CURLMcode, (CURLM *, int *))                            \
	X(curl_multi_poll, CURLMcode, (CURLM *, struct curl_waitfd *, unsigned, int, int *)) \
	X(curl_multi_info_read, CURLMsg *, (CURLM *, int *))                          \
	X(curl_multi_cleanup, CURLMcode, (CURLM *))                                   \
	X(curl_slist_append, struct curl_slist *, (struct curl_slist *, const char *)) \
	X(curl_slist_free_all, void, (struct curl_slist *))                           \
	X(curl_url, CURLU *, (void))                                                  \
	X(curl_url_set, CURLUcode, (CURLU *, CURLUPart, const char *, unsigned int))  \
	X(curl_url_get, CURLUcode, (CURLU *, CURLUPart, char **, unsigned int)) \
	X(curl_url_cleanup, void, (CURLU *))                                          \
	X(curl_getdate, time_t, (const char *, const time_t *))                       \
	X(curl_free, void, (void *))                                                  \
	X(curl_share_init, CURLSH *, (void))                                          \
	X(curl_share_setopt, CURLSHcode, (CURLSH *, CURLSHoption, ...))               \
	X(curl_share_cleanup, CURLSHcode, (CURLSH *))

struct ow_http_curl_api {
#define OW_CURL_PTR(name, ret, args) ret(*name) args;
	OW_CURL_FUNCS(OW_CURL_PTR)
#undef OW_CURL_PTR
};
extern struct ow_http_curl_api ow_http_curl;

/* libcurl loaded and initialised, once per process: 0, else an error
 * naming the library, the cause and what to install. */
int ow_http_curl_ready(void);
/* A curl code that is a failure of TLS (certificate, handshake, CA file). */
int ow_http_curl_tls_error(CURLcode c);
/* A curl code worth another attempt: the connection failed or broke. */
int ow_http_curl_transient(CURLcode c);
/* The CA file (opts, else $SSL_CERT_FILE), checked readable, malloc'd in
 * *out; NULL there: the system's. */
int ow_http_pick_ca_file(const struct ow_http_opts *o, char **out);
/* The options every request of both clients carries: no signals, no
 * redirect followed by libcurl, TLS verified (against ca_file when not
 * NULL), o's timeouts and low-speed limit, the user agent, 256 kB buffers,
 * TCP keep-alive. */
void ow_http_curl_common(CURL *e, const struct ow_http_opts *o, const char *ca_file,
                         const char *user_agent);
/* A sink's nonzero return as an OW_E* code. */
int ow_http_sink_code(int rc);

/* From here on the usual names call through the table (curl.h defines the
 * first three as pass-through macros); the loader itself fills the table
 * under the real names. */
#ifndef OW_HTTPCURL_LOADER
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#undef curl_share_setopt
#define curl_global_init ow_http_curl.curl_global_init
#define curl_easy_init ow_http_curl.curl_easy_init
#define curl_easy_setopt ow_http_curl.curl_easy_setopt
#define curl_easy_getinfo ow_http_curl.curl_easy_getinfo
#define curl_easy_cleanup ow_http_curl.curl_easy_cleanup
#define curl_easy_perform ow_http_curl.curl_easy_perform
#define curl_easy_reset ow_http_curl.curl_easy_reset
#define curl_easy_strerror ow_http_curl.curl_easy_strerror
#define curl_multi_init ow_http_curl.curl_multi_init
#define curl_multi_setopt ow_http_curl.curl_multi_setopt
#define curl_multi_add_handle ow_http_curl.curl_multi_add_handle
#define curl_multi_remove_handle ow_http_curl.curl_multi_remove_handle
#define curl_multi_perform ow_http_curl.curl_multi_perform
#define curl_multi_poll ow_http_curl.curl_multi_poll
#define curl_multi_info_read ow_http_curl.curl_multi_info_read
#define curl_multi_cleanup ow_http_curl.curl_multi_cleanup
#define curl_slist_append ow_http_curl.curl_slist_append
#define curl_slist_free_all ow_http_curl.curl_slist_free_all
#define curl_url ow_http_curl.curl_url
#define curl_url_set ow_http_curl.curl_url_set
#define curl_url_get ow_http_curl.curl_url_get
#define curl_url_cleanup ow_http_curl.curl_url_cleanup
#define curl_getdate ow_http_curl.curl_getdate
#define curl_free ow_http_curl.curl_free
#define curl_share_init ow_http_curl.curl_share_init
#define curl_share_setopt ow_http_curl.curl_share_setopt
#define curl_share_cleanup ow_http_curl.curl_share_cleanup
#endif

#endif
