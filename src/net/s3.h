/* s3.h - a small client for S3-compatible object stores (AWS S3, Ceph RGW,
 * MinIO, SeaweedFS): what publishing and checking an export needs, nothing
 * more.
 *
 *   - a target is s3://BUCKET/PREFIX at an endpoint: --endpoint, else
 *     $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL (path-style requests,
 *     ENDPOINT/BUCKET/KEY, which every S3-compatible store serves), else AWS
 *     itself (https://BUCKET.s3.REGION.amazonaws.com/KEY);
 *   - credentials from $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY /
 *     $AWS_SESSION_TOKEN, else the [$AWS_PROFILE] (default "default")
 *     section of $AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials);
 *     the region from $AWS_REGION, $AWS_DEFAULT_REGION, the profile, else
 *     us-east-1.  The secret is only ever handed to libcurl, never printed;
 *   - every request is signed with AWS Signature V4 by libcurl
 *     (CURLOPT_AWS_SIGV4) over the headers given here, which always include
 *     x-amz-content-sha256 = the body's real SHA-256 (never UNSIGNED-PAYLOAD);
 *     a PUT also carries x-amz-checksum-sha256 (base64), which the store
 *     checks against the bytes it received and refuses on a mismatch
 *     (400 BadDigest), and x-amz-meta-sha256 (hex), which HEAD returns;
 *   - objects above OW_S3_PART_SIZE go up as multipart uploads, each part
 *     with its own checksum headers; an upload that fails is aborted.
 *
 * Keys are relative to the prefix everywhere in this API. */
#ifndef OW_S3_H
#define OW_S3_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "offwheel/str.h"

/* Parts of a multipart upload (S3 allows 5 MiB .. 5 GiB, 10,000 parts). */
#define OW_S3_PART_SIZE (64ull << 20)
#define OW_S3_MAX_PARTS 10000

struct ow_s3 {
	char bucket[64];
	char prefix[1024];   /* "" or ending in '/' */
	char base[600];      /* URL up to the key: ENDPOINT/BUCKET/ or the AWS host */
	char bucket_url[600]; /* URL of the bucket itself (listing, uploads) */
	char region[64];
	char sigv4[96];      /* "aws:amz:REGION:s3" */
	char userpwd[512];   /* "KEY:SECRET"; secret */
	char token_hdr[2200]; /* "x-amz-security-token: ..." or "" */
	int anonymous;       /* no credentials: unsigned GETs (check over a gateway) */
	char owner_hdr[96];  /* "x-amz-meta-offwheel-key: ID" sent with every PUT, or "" */
	struct ow_http_opts http; /* ALLOW_HTTP is set for an http:// endpoint */
	unsigned flags;
};

/* Parse "s3://BUCKET[/PREFIX]" with an endpoint (NULL: from the
 * environment, else AWS) and load credentials (need_creds: missing ones are
 * an error naming where they were looked for; else anonymous).  `http`
 * may be NULL (defaults). */
int ow_s3_open(const char *url, const char *endpoint, int need_creds,
               const struct ow_http_opts *http, struct ow_s3 *s);
/* Any HTTP server holding an export tree at URL (an object store's
 * anonymous gateway, a web server): unsigned GETs of URL/KEY, no listing. */
int ow_s3_open_http(const char *url, const struct ow_http_opts *http, struct ow_s3 *s);
/* Is this an s3:// URL? */
int ow_s3_is_url(const char *s);
/* The URL of a key (encoded: everything but unreserved characters and '/'). */
int ow_s3_key_url(const struct ow_s3 *s, const char *key, const char *query, char *out,
                  size_t n);

struct ow_s3_object {
	char *key; /* relative to the prefix */
	uint64_t size;
};
struct ow_s3_list {
	struct ow_s3_object *v;
	size_t n;
};
/* Every object under the prefix (ListObjectsV2, page by page), for an
 * export of `expect` files: a store that keeps sending pages (few keys and
 * a continuation token each, the same token twice, far more keys than such
 * an export and its neighbours hold, or for over OW_S3_LIST_MAX_S) is an
 * error that says why the listing stopped. */
#define OW_S3_LIST_MAX_S 300
int ow_s3_list(ow_http_conn *c, const struct ow_s3 *s, size_t expect,
               struct ow_s3_list *out);
void ow_s3_list_dispose(struct ow_s3_list *l);
/* Keys with unfinished multipart uploads under the prefix are aborted when
 * `want(ud, key)` says the key is one this run writes. */
int ow_s3_abort_uploads(ow_http_conn *c, const struct ow_s3 *s,
                        int (*want)(const void *ud, const char *key), const void *ud, size_t *aborted);

/* What is PUT under a key: len bytes from memory (body) or from fd at off;
 * sha256 is the hex SHA-256 of exactly those bytes (the caller knows it:
 * the store's object name, or it hashed the text). */
struct ow_s3_put_req {
	const char *key;
	const void *body; /* NULL: read from fd */
	int fd;
	uint64_t off, len;
	const char *sha256;
	const char *content_type;
};
/* PUT an object; large bodies go multipart. */
int ow_s3_put(ow_http_conn *c, const struct ow_s3 *s, const struct ow_s3_put_req *o);
/* HEAD: *size, and sha256 from the store's own x-amz-checksum-sha256 of a
 * single-part object, else x-amz-meta-sha256, "" when it has neither;
 * owner (may be NULL) the x-amz-meta-offwheel-key it was written with.
 * OW_ENOENT when the key is not there. */
int ow_s3_head(ow_http_conn *c, const struct ow_s3 *s, const char *key, uint64_t *size,
               char sha256[65], char owner[32]);
int ow_s3_delete(ow_http_conn *c, const struct ow_s3 *s, const char *key);
/* GET a key into a sink (signed, or anonymous when s->anonymous). */
int ow_s3_get(ow_http_conn *c, const struct ow_s3 *s, const char *key,
              int (*on_data)(void *ud, const void *buf, size_t len), int (*on_restart)(void *ud),
              void *ud, uint64_t max);

/* The text S3 put in an <Error> body ("AccessDenied: ..."), for messages;
 * s's own credentials (key id, secret, session token) in it are shown as
 * "***" (s may be NULL). */
void ow_s3_error_text(const struct ow_s3 *s, const char *xml, char *out, size_t n);

#endif
