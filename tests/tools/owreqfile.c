/* owreqfile.c - print what offwheel reads from pip requirement files, one
 * JSON object per requirement, for tests/tools/reqfile_oracle.py to compare
 * with pip's own parser.
 *
 * usage: owreqfile [-c] FILE...      (-c: the files after it are constraints)
 *
 * Each object: name, extras (sorted), specifier (canonical), constraint,
 * hashes, where, and `applies`: for each target of TARGETS the marker's
 * value ("1"/"0"/"E"), with the marker variables used, so the oracle
 * evaluates the same marker against the same values.  Then one object with
 * the run options.  Exit 1 with ow_err's detail on stderr on an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "reqfile.h"

static const char *const targets[][2] = {
	{"3.12", "linux-x86_64"}, {"3.9", "windows-x86_64"}, {"3.13", "macos-arm64"},
	{"3.11", "linux-aarch64"},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_strs(const char *key, char **v, size_t n)
{
	printf(", \"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		printf(i ? ", " : "");
		json_str(v[i]);
	}
	printf("]");
}

static void print_applies(const struct ow_requirement *r)
{
	printf(", \"applies\": [");
	for (size_t k = 0; k < NTARGETS; k++) {
		struct ow_target t;
		struct ow_marker_env env;
		bool res = false;
		if (ow_target_parse(&t, targets[k][0], targets[k][1]) != 0)
			abort();
		ow_marker_env_for_target(&env, &t);
		int rc = ow_requirement_applies(r, &env, NULL, &res);
		printf("%s{\"result\": \"%s\", \"env\": {", k ? ", " : "", rc ? "E" : res ? "1" : "0");
		static const char *const names[] = {
#define OW_X_NAME(id, name) #name,
			OW_MARKER_VARS(OW_X_NAME)
#undef OW_X_NAME
		};
		for (int v = 0; v < OW_MV_EXTRA; v++) {
			printf("%s\"%s\": ", v ? ", " : "", names[v]);
			json_str(env.value[v]);
		}
		printf("}}");
	}
	printf("]");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_line(const struct ow_reqline *l)
{
	char spec[1024];
	char *extras[OW_REQ_EXTRAS_MAX];
	static struct ow_requirement req; /* the line keeps its text: parse it again */
	if (ow_requirement_parse(&req, l->text) < 0)
		abort();
	for (size_t i = 0; i < req.nextras; i++)
		extras[i] = strdup(req.extras[i]);
	qsort(extras, req.nextras, sizeof extras[0], cmp_str);
	if (ow_spec_format(&req.spec, spec, sizeof spec) < 0)
		abort();
	printf("{\"name\": ");
	json_str(req.name);
	print_strs("extras", extras, req.nextras);
	printf(", \"specifier\": ");
	json_str(spec);
	printf(", \"constraint\": %s", l->constraint ? "true" : "false");
	print_strs("hashes", l->hashes, l->nhashes);
	printf(", \"where\": ");
	json_str(l->where);
	for (size_t i = 0; i < req.nextras; i++)
		free(extras[i]);
	print_applies(&req);
	ow_requirement_dispose(&req);
	printf("}\n");
}

int main(int argc, char **argv)
{
	struct ow_reqfile rf = {0};
	struct ow_reqfile_io io = {ow_reqfile_read_fs, ow_reqfile_getenv, NULL};
	bool constraint = false;
	int rc = 0;
	for (int i = 1; i < argc && rc == 0; i++) {
		if (!strcmp(argv[i], "-c"))
			constraint = true;
		else
			rc = ow_reqfile_read(&rf, argv[i], constraint, &io);
	}
	if (rc < 0) {
		fprintf(stderr, "owreqfile: %s\n", ow_err_detail());
		ow_reqfile_dispose(&rf);
		return 1;
	}
	for (size_t i = 0; i < rf.nlines; i++)
		print_line(&rf.lines[i]);
	printf("{\"options\": true, \"index_url\": ");
	json_str(rf.index_url ? rf.index_url : "");
	print_strs("extra_index_urls", rf.extra_index_urls, rf.nextra);
	print_strs("trusted_hosts", rf.trusted_hosts, rf.ntrusted);
	printf(", \"pre\": %s, \"no_index\": %s, \"require_hashes\": %s}\n", rf.pre ? "true" : "false",
	       rf.no_index ? "true" : "false", rf.require_hashes ? "true" : "false");
	ow_reqfile_dispose(&rf);
	return 0;
}
