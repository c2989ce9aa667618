/* curlapi.h - libcurl, loaded on first use.
 *
 * libcurl on Debian pulls in about 30 shared libraries (gnutls, kerberos,
 * ldap, ssh, rtmp...) whose loading and constructors cost ~3.5 ms at every
 * start (measured: an empty program linked with -lcurl starts in 6.0 ms,
 * 2.4 ms without).  Only the commands that go to the network need it, so
 * offwheel resolves the few entry points it uses with dlopen when the
 * transfer engine is first created: offline commands (audit, verify, ls,
 * export, check, smoke) never load it.
 *
 * OFFWHEEL_LIBCURL names another libcurl to load (a path or a soname).
 *
 * Include this, not <curl/curl.h>, after which the usual names work. */
#ifndef OW_CURLAPI_H
#define OW_CURLAPI_H

#define CURL_DISABLE_TYPECHECK 1 /* its macros would wrap our pointers */
#include <curl/curl.h>

/* X(name, return type, parameters) for every libcurl function offwheel calls */
#define OW_CURL_FUNCS(X)                                                          \
	X(curl_global_init, CURLcode, (long))                                         \
	X(curl_easy_init, CURL *, (void))                                             \
	X(curl_easy_setopt, CURLcode, (CURL *, CURLoption, ...))                      \
	X(curl_easy_getinfo, CURLcode, (CURL *, CURLINFO, ...))                       \
	X(curl_easy_cleanup, void, (CURL *))                                          \
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
	X(curl_free, void, (void *))

struct ow_curl_api {
#define OW_CURL_PTR(name, ret, args) ret(*name) args;
	OW_CURL_FUNCS(OW_CURL_PTR)
#undef OW_CURL_PTR
};

extern struct ow_curl_api ow_curl;

/* Load libcurl and resolve every function above, once per process (thread
 * safe).  0, or an OW_EUNSUPPORTED error that names the library, the cause
 * and the package to install. */
int ow_curl_load(void);

#ifndef OW_CURLAPI_IMPL
/* curl.h defines these three as pass-through macros */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_global_init ow_curl.curl_global_init
#define curl_easy_init ow_curl.curl_easy_init
#define curl_easy_setopt ow_curl.curl_easy_setopt
#define curl_easy_getinfo ow_curl.curl_easy_getinfo
#define curl_easy_cleanup ow_curl.curl_easy_cleanup
#define curl_easy_strerror ow_curl.curl_easy_strerror
#define curl_multi_init ow_curl.curl_multi_init
#define curl_multi_setopt ow_curl.curl_multi_setopt
#define curl_multi_add_handle ow_curl.curl_multi_add_handle
#define curl_multi_remove_handle ow_curl.curl_multi_remove_handle
#define curl_multi_perform ow_curl.curl_multi_perform
#define curl_multi_poll ow_curl.curl_multi_poll
#define curl_multi_info_read ow_curl.curl_multi_info_read
#define curl_multi_cleanup ow_curl.curl_multi_cleanup
#define curl_slist_append ow_curl.curl_slist_append
#define curl_slist_free_all ow_curl.curl_slist_free_all
#define curl_url ow_curl.curl_url
#define curl_url_set ow_curl.curl_url_set
#define curl_url_get ow_curl.curl_url_get
#define curl_url_cleanup ow_curl.curl_url_cleanup
#define curl_getdate ow_curl.curl_getdate
#define curl_free ow_curl.curl_free
#endif

#endif
