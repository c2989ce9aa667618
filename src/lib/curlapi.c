/* curlapi.c - libcurl resolved with dlopen on first use (see curlapi.h). */
#define OW_CURLAPI_IMPL 1
#include "curlapi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"

#ifndef OW_CURL_SONAME
#define OW_CURL_SONAME "libcurl.so.4"
#endif

struct ow_curl_api ow_curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512];

static const char *lib_name(void)
{
	const char *env = getenv("OFFWHEEL_LIBCURL");
	return env && *env ? env : OW_CURL_SONAME;
}

static void load(void)
{
	void *h = dlopen(lib_name(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, sizeof why, "%s", e ? e : "not found");
		return;
	}
	struct ow_curl_api api;
#define OW_CURL_SYM(name, ret, args)                                                 \
	if (!(*(void **)&api.name = dlsym(h, #name))) {                                  \
		snprintf(why, sizeof why, "it has no %s (libcurl older than 7.80?)", #name); \
		return;                                                                  \
	}
	OW_CURL_FUNCS(OW_CURL_SYM)
#undef OW_CURL_SYM
	ow_curl = api;
}

int ow_curl_load(void)
{
	pthread_once(&once, load);
	if (ow_curl.curl_free)
		return 0;
	return ow_err(OW_EUNSUPPORTED,
	              "cannot load %s, which offwheel needs for the network: %s — install "
	              "libcurl 7.80 or newer (Debian/Ubuntu: apt-get install libcurl4) or point "
	              "OFFWHEEL_LIBCURL at one; offline commands work without it",
	              lib_name(), why);
}
