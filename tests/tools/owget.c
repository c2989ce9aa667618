/* owget.c - a tiny driver of the http engine for integration tests.
 *
 *   owget [options] URL FILE [URL FILE ...]
 *     --cert FILE            CA file (else $SSL_CERT_FILE / system CAs)
 *     --allow-http           plain http allowed (trusted host)
 *     --allow-file           file:// allowed
 *     --resume VALIDATOR     continue FILE from its current size, If-Range
 *     --if-none-match ETAG   conditional GET
 *     --if-modified-since D
 *     --expected N           expected size
 *     --max N                size cap
 *     --jobs N / --per-host N / --attempts N / --stall S
 *
 * Prints one JSON object per transfer on stdout; exits with the CLI exit
 * code of the first failure (0 when all succeeded). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offwheel/error.h"
#include "http.h"

struct out {
	FILE *f;
	const char *path;
};

static int out_write(void *ud, const void *buf, size_t len)
{
	struct out *o = ud;
	if (fwrite(buf, 1, len, o->f) != len)
		return ow_err(OW_EIO, "%s: write failed: %s", o->path, strerror(errno));
	return 0;
}

static int out_restart(void *ud)
{
	struct out *o = ud;
	if (fflush(o->f) || ftruncate(fileno(o->f), 0) || fseek(o->f, 0, SEEK_SET))
		return ow_err(OW_EIO, "%s: truncate failed: %s", o->path, strerror(errno));
	return 0;
}

static void json_str(const char *k, const char *v, int comma)
{
	printf("\"%s\":\"", k);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			putchar('\\');
		if ((unsigned char)*v >= 0x20)
			putchar(*v);
	}
	printf("\"%s", comma ? "," : "");
}

static void report(const struct ow_http_req *q)
{
	const struct ow_http_result *r = &q->res;
	printf("{");
	json_str("url", q->url, 1);
	json_str("rc", ow_err_name(r->rc), 1);
	printf("\"status\":%ld,\"bytes\":%llu,\"received\":%llu,\"attempts\":%u,"
	       "\"redirects\":%u,\"resumed\":%d,\"restarted\":%d,\"not_modified\":%d,",
	       r->status, (unsigned long long)r->bytes, (unsigned long long)r->received,
	       r->attempts, r->redirects, r->resumed, r->restarted, r->not_modified);
	json_str("etag", r->etag, 1);
	json_str("last_modified", r->last_modified, 1);
	json_str("effective_url", r->effective_url, 1);
	json_str("detail", r->detail, 0);
	printf("}\n");
}

static unsigned long long num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !*s) {
		fprintf(stderr, "owget: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

static struct ow_http_req tmpl;
static const char *resume;

static void parse(int argc, char **argv, struct ow_http_opts *o)
{
	static const struct option lo[] = {
		{"cert", 1, 0, 'c'}, {"allow-http", 0, 0, 'h'}, {"allow-file", 0, 0, 'f'},
		{"resume", 1, 0, 'r'}, {"if-none-match", 1, 0, 'n'},
		{"if-modified-since", 1, 0, 'm'}, {"expected", 1, 0, 'e'}, {"max", 1, 0, 'x'},
		{"jobs", 1, 0, 'j'}, {"per-host", 1, 0, 'p'}, {"attempts", 1, 0, 'a'},
		{"stall", 1, 0, 's'}, {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->ca_file = optarg; break;
		case 'h': tmpl.flags |= OW_HTTP_ALLOW_HTTP; break;
		case 'f': tmpl.flags |= OW_HTTP_ALLOW_FILE; break;
		case 'r': resume = optarg; break;
		case 'n': tmpl.if_none_match = optarg; break;
		case 'm': tmpl.if_modified_since = optarg; break;
		case 'e': tmpl.expected_size = num(optarg); break;
		case 'x': tmpl.max_size = num(optarg); break;
		case 'j': o->jobs = (unsigned)num(optarg); break;
		case 'p': o->per_host = (unsigned)num(optarg); break;
		case 'a': o->max_attempts = (unsigned)num(optarg); break;
		case 's': o->low_speed_time_s = (long)num(optarg); break;
		default: exit(2);
		}
	}
	if (optind >= argc || (argc - optind) % 2) {
		fprintf(stderr, "usage: owget [options] URL FILE [URL FILE ...]\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct ow_http_opts o;
	ow_http *h;
	ow_http_opts_default(&o);
	o.backoff_base_ms = 50;
	o.backoff_max_ms = 500;
	parse(argc, argv, &o);
	int n = (argc - optind) / 2, rc = ow_http_new(&h, &o);
	if (rc) {
		fprintf(stderr, "owget: %s\n", ow_err_detail());
		return ow_err_exit_code(rc);
	}
	struct ow_http_req *q = calloc((size_t)n, sizeof *q);
	struct out *outs = calloc((size_t)n, sizeof *outs);
	for (int i = 0; q && outs && i < n; i++) {
		struct stat st;
		outs[i].path = argv[optind + 2 * i + 1];
		outs[i].f = fopen(outs[i].path, resume ? "ab" : "wb");
		if (!outs[i].f) {
			fprintf(stderr, "owget: %s: %s\n", outs[i].path, strerror(errno));
			return 1;
		}
		q[i] = tmpl;
		q[i].url = argv[optind + 2 * i];
		q[i].on_data = out_write;
		q[i].on_restart = out_restart;
		q[i].ud = &outs[i];
		if (resume && !fstat(fileno(outs[i].f), &st)) {
			q[i].resume_from = (uint64_t)st.st_size;
			q[i].if_range = resume;
		}
		if (ow_http_add(h, &q[i]))
			fprintf(stderr, "owget: %s\n", ow_err_detail());
	}
	rc = ow_http_run(h);
	for (int i = 0; q && outs && i < n; i++) {
		report(&q[i]);
		fclose(outs[i].f);
	}
	ow_http_free(h);
	free(q);
	free(outs);
	return ow_err_exit_code(rc);
}
