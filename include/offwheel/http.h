/* http.h - the options of the transfer engine every crawl, resolve and
 * fetch uses (parallel transfers, CA file, timeouts, retries, caps); the
 * engine itself is internal (src/net/http.h says what it guarantees). */
#ifndef OW_PUBLIC_HTTP_H
#define OW_PUBLIC_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "offwheel/logins.h"

/* Return nonzero to refuse `url` (every hop, including the first, and the
 * effective URL at the end are passed through it). */
typedef int (*ow_http_allow_fn)(void *ud, const char *url);

/* Connections kept from one engine to the next (ow_http_pool_new): a run of
 * many small batches (a resolve's rounds) opens one TLS connection per host
 * and reuses it, instead of a fresh handshake per host in every batch. */
typedef struct ow_http_pool ow_http_pool;

struct ow_http_opts {
	unsigned jobs;              /* transfers in parallel (default 8) */
	unsigned per_host;          /* of which to one host (default 4) */
	const char *ca_file;        /* NULL: $SSL_CERT_FILE, else system CAs */
	long connect_timeout_ms;    /* default 15000 */
	long low_speed_bytes;       /* stall: below this many bytes/s ... */
	long low_speed_time_s;      /* ... for this long aborts (default 1, 30) */
	long attempt_timeout_ms;    /* whole-attempt limit, 0 = none (default) */
	long min_rate_bytes;        /* a transfer must average at least this many
	                             * bytes/s over every low_speed_time_s window
	                             * (headers count), else the attempt is a
	                             * stall (default 10240; 0 = off) */
	long deadline_floor_ms;     /* a transfer (all attempts, backoff
	                             * included) ends at the latest after
	                             * max(this, retry_budget_ms, 2 x size /
	                             * min_rate), size = the expected size, else
	                             * the Content-Length, else the cap (default
	                             * 300000; 0 = no deadline) */
	unsigned max_redirects;     /* default 5 */
	unsigned max_attempts;      /* first try included (default 5) */
	long retry_budget_ms;       /* no new attempt after this (default 120000) */
	long backoff_base_ms;       /* first backoff (default 500) */
	long backoff_max_ms;        /* cap of one backoff (default 30000) */
	long retry_after_max_s;     /* larger Retry-After = give up (default 60) */
	uint64_t max_size;          /* body cap when the request gives none
	                             * (default 4 GiB) */
	size_t header_max_bytes;    /* per response (default 64 KiB) */
	unsigned header_max_count;  /* per response (default 200) */
	const char *user_agent;     /* default "offwheel/<version>" */
	/* The directory whose filesystem receives the bodies (a workspace's
	 * tmp/), NULL for no check: when a response's Content-Length is known,
	 * before its first body byte, it must fit in that filesystem's free
	 * space beside what the transfers under way still bring (with a
	 * margin); else the transfer fails with OW_ENOSPC, nothing written. */
	const char *space_dir;
	ow_http_allow_fn allow_url; /* NULL: scheme rules only */
	void *allow_ud;
	/* Logins (HTTP basic auth): every request and every redirect hop to an
	 * http(s) URL carries the one ow_logins_find gives for that URL, and
	 * none when it gives none: a login never follows a redirect to another
	 * host.  NULL: no login is ever sent.  Must outlive the engine. */
	const ow_logins *logins;
	/* Connections, TLS sessions and DNS answers shared with the other
	 * engines given the same pool, one engine running at a time, in one
	 * thread; its transfers wait for a host's first connection and then
	 * share it (HTTP/2 streams) rather than opening per_host connections.
	 * NULL: each engine opens its own and closes them at its end.  Must
	 * outlive the engine. */
	ow_http_pool *pool;
};

/* Defaults as documented above. */
void ow_http_opts_default(struct ow_http_opts *o);

/* A pool of connections for engines run one after the other (the engines
 * freed before it).  ow_http_pool_free accepts NULL. */
int ow_http_pool_new(ow_http_pool **out);
void ow_http_pool_free(ow_http_pool *p);

/* Once the process was interrupted (ow_interrupt, error.h: the one flag)
 * every engine ends its transfers with OW_EINTERRUPTED at once. */
#endif
