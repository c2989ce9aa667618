/* owtoml.c - print what offwheel reads from a TOML file, as JSON, for
 * tests/tools/toml_oracle.py to compare with Python's tomllib.
 *
 * usage: owtoml FILE
 *          the document: tables as objects (keys in file order), arrays as
 *          arrays, strings as strings, every other value as
 *          {"scalar": "<its text>"}
 *        owtoml --pyproject FILE [--extra NAME]... [--group NAME]...
 *        owtoml --build-system FILE|-   (PEP 518's [build-system], "-": no file)
 *          the requirements offwheel takes from it: [{"text", "where"}, ...]
 * Exit 1 with ow_err's detail on stderr when the file is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "pyproject.h"
#include "toml.h"

static void json_str(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void dump(const struct ow_toml *t)
{
	switch (t->kind) {
	case OW_TOML_STRING:
		json_str(t->text, t->len);
		break;
	case OW_TOML_SCALAR:
		printf("{\"scalar\": ");
		json_str(t->text, t->len);
		putchar('}');
		break;
	case OW_TOML_ARRAY:
	case OW_TOML_TABLE:
		putchar(t->kind == OW_TOML_ARRAY ? '[' : '{');
		for (size_t i = 0; i < t->n; i++) {
			printf(i ? ", " : "");
			if (t->kind == OW_TOML_TABLE) {
				json_str(t->kids[i]->key, strlen(t->kids[i]->key));
				printf(": ");
			}
			dump(t->kids[i]);
		}
		putchar(t->kind == OW_TOML_ARRAY ? ']' : '}');
		break;
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;
	*len = 0;
	for (; f;) {
		if (*len + 65536 > cap && !(buf = realloc(buf, cap = 2 * cap + 65536)))
			break;
		size_t k = fread(buf + *len, 1, cap - *len, f);
		*len += k;
		if (!k)
			break;
	}
	if (f)
		fclose(f);
	return buf;
}

/* --build-system FILE: {"requires": [...], "backend": ..., "declared": ...};
 * FILE "-" stands for no pyproject.toml at all. */
static int build_system(const char *path)
{
	size_t len = 0;
	char *text = strcmp(path, "-") ? slurp(path, &len) : NULL;
	if (strcmp(path, "-") && !text) {
		fprintf(stderr, "%s: cannot read\n", path);
		return 2;
	}
	struct ow_pybuild b;
	int rc = ow_pyproject_build_system(path, text, len, &b);
	free(text);
	if (rc < 0) {
		fprintf(stderr, "%s\n", ow_err_detail());
		return 1;
	}
	printf("{\"requires\": [");
	for (size_t i = 0; i < b.n; i++) {
		printf(i ? ", " : "");
		json_str(b.requires[i], strlen(b.requires[i]));
	}
	printf("], \"backend\": ");
	if (b.backend)
		json_str(b.backend, strlen(b.backend));
	else
		printf("null");
	printf(", \"declared\": %s}\n", b.declared ? "true" : "false");
	ow_pybuild_dispose(&b);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--build-system"))
		return build_system(argv[2]);
	bool py = argc > 1 && !strcmp(argv[1], "--pyproject");
	const char *extras[64], *groups[64];
	size_t ne = 0, ng = 0;
	if (argc < 2 + py) {
		fprintf(stderr, "usage: owtoml [--pyproject] FILE [--extra NAME]... [--group NAME]...\n");
		return 2;
	}
	const char *path = argv[1 + py];
	bool all = false;
	for (int i = 2 + py; i < argc && ne < 64 && ng < 64; i++)
		if (!strcmp(argv[i], "--all-extras"))
			all = true;
		else if (!strcmp(argv[i], "--extra") && i + 1 < argc)
			extras[ne++] = argv[++i];
		else if (!strcmp(argv[i], "--group") && i + 1 < argc)
			groups[ng++] = argv[++i];
	size_t len;
	char *text = slurp(path, &len);
	if (!text) {
		fprintf(stderr, "%s: cannot read\n", path);
		return 2;
	}
	int rc;
	if (py) {
		struct ow_pyreq *r;
		size_t n;
		struct ow_pyproject_want w = {extras, ne, all, groups, ng};
		rc = ow_pyproject_requirements(path, text, len, &w, &r, &n);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			printf(i ? ",\n {\"text\": " : "[{\"text\": ");
			json_str(r[i].text, strlen(r[i].text));
			printf(", \"where\": ");
			json_str(r[i].where, strlen(r[i].where));
			putchar('}');
		}
		if (rc == 0)
			printf(n ? "]\n" : "[]\n");
		if (rc == 0)
			ow_pyreqs_free(r, n);
	} else {
		struct ow_toml *t;
		rc = ow_toml_parse(text, len, path, &t);
		if (rc == 0) {
			dump(t);
			putchar('\n');
			ow_toml_free(t);
		}
	}
	free(text);
	if (rc < 0)
		fprintf(stderr, "%s\n", ow_err_detail());
	return rc < 0;
}
