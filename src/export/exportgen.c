/* exportgen.c - the generated text files of an export: PEP 503 pages,
 * requirements, INSTALL.txt, SHA256SUMS, an nginx server block. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offwheel/error.h"
#include "exportint.h"
#include "clock.h"
#include "digest.h"

void ex_put_html(struct ow_str *b, const char *t)
{
	for (; *t; t++) {
		switch (*t) {
		case '&': ow_str_printf(b, "&amp;"); break;
		case '<': ow_str_printf(b, "&lt;"); break;
		case '>': ow_str_printf(b, "&gt;"); break;
		case '"': ow_str_printf(b, "&quot;"); break;
		case '\'': ow_str_printf(b, "&#39;"); break;
		default: ow_str_printf(b, "%c", *t);
		}
	}
}

static void sb_url_component(struct ow_str *b, const char *t)
{
	for (; *t; t++) {
		unsigned char c = (unsigned char)*t;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			ow_str_printf(b, "%c", c);
		else
			ow_str_printf(b, "%%%02X", c);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *page_head(void)
{
	return "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" "
	       "content=\"1.0\">\n";
}

int ex_gen_simple_root(const struct ow_export_plan *p, struct ow_str *out)
{
	const char **names = calloc(p->n + 1, sizeof *names);
	if (!names)
		return ow_err(OW_ENOMEM, "simple index: out of memory");
	for (size_t i = 0; i < p->n; i++)
		names[i] = p->items[i].project;
	qsort(names, p->n, sizeof *names, cmp_str);
	ow_str_printf(out, "%s    <title>Simple index</title>\n  </head>\n  <body>\n", page_head());
	for (size_t i = 0; i < p->n; i++) {
		if (i && !strcmp(names[i], names[i - 1]))
			continue;
		ow_str_printf(out, "    <a href=\"");
		sb_url_component(out, names[i]);
		ow_str_printf(out, "/\">");
		ex_put_html(out, names[i]);
		ow_str_printf(out, "</a><br/>\n");
	}
	ow_str_printf(out, "  </body>\n</html>\n");
	free(names);
	return out->err;
}

static void project_link(struct ow_str *out, const struct ow_export_item *it, const char *up)
{
	ow_str_printf(out, "    <a href=\"%s", up);
	sb_url_component(out, it->filename);
	ow_str_printf(out, "#sha256=%s\"", it->object);
	if (it->requires_python && *it->requires_python) {
		ow_str_printf(out, " data-requires-python=\"");
		ex_put_html(out, it->requires_python);
		ow_str_printf(out, "\"");
	}
	if (it->meta_object[0])
		ow_str_printf(out, " data-dist-info-metadata=\"sha256=%s\" data-core-metadata=\"sha256=%s\"",
		             it->meta_object, it->meta_object);
	ow_str_printf(out, ">");
	ex_put_html(out, it->filename);
	ow_str_printf(out, "</a><br/>\n");
}

int ex_gen_project_page(const struct ow_export_plan *p, const char *project, struct ow_str *out)
{
	ow_str_printf(out, "%s    <title>Links for ", page_head());
	ex_put_html(out, project);
	ow_str_printf(out, "</title>\n  </head>\n  <body>\n    <h1>Links for ");
	ex_put_html(out, project);
	ow_str_printf(out, "</h1>\n");
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->items[i].project, project))
			project_link(out, &p->items[i], "../../wheels/");
	ow_str_printf(out, "  </body>\n</html>\n");
	return out->err;
}

/* wheels/index.html: one flat page of every wheel, for pip --find-links
 * URL/wheels/index.html where a server cannot answer .../simple/torch/ (an
 * object store has no index file for a key ending in '/'). */
int ex_gen_links(const struct ow_export_plan *p, struct ow_str *out)
{
	ow_str_printf(out, "%s    <title>Every wheel of this export</title>\n  </head>\n  <body>\n"
	              "    <h1>Every wheel of this export</h1>\n", page_head());
	for (size_t i = 0; i < p->n; i++)
		project_link(out, &p->items[i], "");
	ow_str_printf(out, "  </body>\n</html>\n");
	return out->err;
}

/* Which interpreter a set is for, and the one line that checks the Python
 * at hand before pip runs: pip would otherwise take a wheel of the same
 * name for another Python from the same directory and fail on its hash, as
 * if the stick had been tampered with. */
static void interpreter(struct ow_str *out, const struct ow_export_set *set, const char *lead)
{
	struct ex_target t;
	if (!set->id || ex_target_of(set->target, &t) != 0)
		return;
	const char *plat = strchr(set->target, '-');
	/* Windows: cmd and PowerShell both take "..." with '...' inside, and
	 * a venv there has `python`, not `python3` */
	bool win = plat && !strncmp(plat + 1, "win", 3);
	ow_str_printf(out, "%sfor CPython %d.%d%s on %s; check the Python first%s:\n", lead,
	              t.py_major, t.py_minor, t.freethreaded ? " (free-threaded)" : "",
	              plat ? plat + 1 : set->target, win ? " (cmd or PowerShell)" : "");
	ow_str_printf(out, win ? "%s  python -c \"import sys; sys.exit(sys.version_info[:2] != (%d, "
	                         "%d) and 'this set is for CPython %d.%d, not ' + "
	                         "sys.version.split()[0])\"\n"
	                       : "%s  python3 -c 'import sys; sys.exit(sys.version_info[:2] != (%d, "
	                         "%d) and \"this set is for CPython %d.%d, not \" + "
	                         "sys.version.split()[0])'\n",
	              lead, t.py_major, t.py_minor, t.py_major, t.py_minor);
}

int ex_gen_requirements(const struct ow_export_plan *p, const struct ow_export_set *set,
                         struct ow_str *out)
{
	ow_str_printf(out, "# %s — generated by offwheel export; install with pip's hash-checking "
	                  "mode (see INSTALL.txt)\n", set->target);
	interpreter(out, set, "# ");
	for (size_t i = 0; i < set->n; i++) {
		const struct ow_export_item *it = &p->items[set->members[i]];
		if (!ex_build_only(set, i))
			ow_str_printf(out, "%s==%s --hash=sha256:%s\n", it->project, it->version,
			              it->object);
	}
	return out->err;
}


/* "  audited for 12.0: runs (native)", one line per device; or that none was. */
static void install_devices(struct ow_str *out, const struct ow_export_set *set)
{
	char cc[16], drv[16];
	if (!set->ndevices)
		ow_str_printf(out, "  not audited for any device\n");
	for (size_t i = 0; i < set->ndevices; i++) {
		const struct ow_export_device *d = &set->devices[i];
		ex_cc_text(d->cc, cc, sizeof cc);
		ex_driver_text(d->driver, drv, sizeof drv);
		ow_str_printf(out, "  audited for %s%s%s: %s (%s%s)", cc, d->driver ? " with driver " : "",
		              d->driver ? drv : "", d->runs > 0 ? "runs" : d->runs == 0 ? "WOULD NOT RUN"
		                                                        : "unknown",
		              d->verdict, d->predicted ? ", predicted from torchvision" : "");
		if (d->runs == 0 && d->library)
			ow_str_printf(out, " — %s: %lld of %lld modules have no sm_%d image", d->library,
			              (long long)d->no_image, (long long)d->modules, d->cc);
		ow_str_printf(out, "\n");
	}
}

static bool has_sdist(const struct ow_export_plan *p, const struct ow_export_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (ow_export_is_sdist(p->items[set->members[i]].filename))
			return true;
	return false;
}

/* The members that come as source: built by pip or uv on the target. */
static void install_sdists(struct ow_str *out, const struct ow_export_plan *p,
                           const struct ow_export_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++)
		if (!ex_build_only(set, i) && ow_export_is_sdist(p->items[set->members[i]].filename))
			ow_str_printf(out, "%s%s", n++ ? ", " : "  built from source at install: ",
			              p->items[set->members[i]].filename);
	if (n)
		ow_str_printf(out, "\n    (their build requirements are in wheels/ too; one with "
		                   "native code needs a compiler on the target)\n");
}

static void install_set(struct ow_str *out, const struct ow_export_plan *p,
                        const struct ow_export_set *set)
{
	ow_str_printf(out, "\nTarget %s%s%s%s\n", set->target, set->torch_version ? " (torch " : "",
	             set->torch_version ? set->torch_version : "", set->torch_version ? ")" : "");
	install_devices(out, set);
	install_sdists(out, p, set);
	interpreter(out, set, "  ");
	ow_str_printf(out, "  from the wheels directory:\n"
	                  "    pip install --no-index --find-links wheels --require-hashes -r "
	                  "requirements/%s.txt\n",
	             set->req_name);
	ow_str_printf(out, "  with uv, from the lock file (PEP 751; uv refuses it for another Python):\n"
	                  "    uv pip install --offline --no-index%s -r pylock.%s.toml\n",
	             has_sdist(p, set) ? " --find-links wheels" : "", set->req_name);
	ow_str_printf(out, "  through the PEP 503 index:\n"
	                  "    pip install --index-url \"file://$PWD/simple\" --require-hashes -r "
	                  "requirements/%s.txt\n",
	             set->req_name);
	ow_str_printf(out, "  from a lab server serving this directory (offwheel export --nginx-conf):\n"
	                  "    pip install --index-url http://SERVER/simple --require-hashes -r "
	                  "requirements/%s.txt\n",
	             set->req_name);
	ow_str_printf(out, "  from a web server or an object store's gateway holding this tree:\n"
	                  "    pip install --no-index --find-links URL/wheels/index.html "
	                  "--require-hashes -r URL/requirements/%s.txt\n",
	             set->req_name);
}

/* Every command is relative to the export's root, so it works wherever the
 * stick is mounted: the user changes into it first. */
int ex_gen_install(const struct ow_export_plan *p, const struct ex_meta *m, struct ow_str *out)
{
	char created[40], expires[40];
	ow_utc_text(m->created, created, sizeof created);
	ow_utc_text(m->expires, expires, sizeof expires);
	ow_str_printf(out, "offwheel export %s — sequence %lld, created %s, expires %s, %s %s\n"
	                  "(written to %s)\n\n",
	             OW_VERSION, (long long)m->sequence, created, expires,
	             m->key_id[0] ? "signed by key" : "NOT SIGNED", m->key_id, m->dir);
	ow_str_printf(out, "Run every command below from this directory, wherever it is mounted\n"
	                  "(for example: cd /media/$USER/STICK/offwheel).\n\n"
	                  "1. Check the export first, with offwheel:\n"
	                  "    offwheel check . --pubkey KEY.pub\n"
	                  "   or with stock tools only (Debian packages signify-openbsd, coreutils):\n"
	                  "    signify-openbsd -V -p KEY.pub -m " OW_EXPORT_SUMS
	                  " && sha256sum -c " OW_EXPORT_SUMS "\n"
	                  "   (KEY.pub is the public key you trust, brought separately.  The stock\n"
	                  "   tools do not catch an expired or rolled-back stick, files added to it,\n"
	                  "   links or FIFOs on it: 'offwheel check' does.)\n\n");
	if (m->tool)
		ow_str_printf(out, "   No offwheel on this machine?  It is on this stick (the sums above\n"
		                   "   cover it): check with the stock tools, then\n"
		                   "    sudo apt install ./tools/%s\n\n",
		             m->tool);
	ow_str_puts(out, "2. Install a target (in a virtual environment of its Python):\n");
	for (size_t i = 0; i < p->nsets; i++)
		install_set(out, p, &p->sets[i]);
	if (m->install_note)
		ow_str_printf(out, "\n%s", m->install_note);
	return out->err;
}

int ex_gen_nginx(const char *dir, struct ow_str *out)
{
	ow_str_printf(out,
	             "# nginx server block serving the offwheel export %s (offwheel export\n"
	             "# --nginx-conf).  Include it in the http {} block, e.g. as\n"
	             "# /etc/nginx/conf.d/offwheel.conf; clients then use\n"
	             "#   pip install --index-url http://SERVER:8080/simple --require-hashes -r ...\n"
	             "server {\n"
	             "    listen 8080;\n"
	             "    server_name _;\n"
	             "    root %s;\n"
	             "    autoindex off;\n"
	             "    index index.html;\n"
	             "    disable_symlinks on;\n"
	             "    types {\n"
	             "        text/html html;\n"
	             "        text/plain txt metadata sig;\n"
	             "        application/json json;\n"
	             "        application/zip whl;\n"
	             "    }\n"
	             "    default_type text/plain;\n"
	             "    location ~ /\\. { deny all; }\n"
	             "}\n",
	             dir, dir);
	return out->err;
}

int ex_gen_nginx_proxy(const char *url, struct ow_str *out)
{
	/* origin (scheme://host[:port]) and path (/BUCKET/PREFIX): a regex
	 * location's proxy_pass takes no path, so the path goes in by rewrite */
	const char *host = strstr(url, "://");
	host = host ? host + 3 : url;
	const char *path = strchr(host, '/');
	int ol = path ? (int)(path - url) : (int)strlen(url);
	if (!path)
		path = "";
	static const char loc[] =
		"        limit_except GET HEAD { deny all; }\n"
		"        rewrite ^/(.*)$ %s/$1 break;\n"
		"        proxy_pass %.*s;\n"
		"        proxy_http_version 1.1;\n"
		"        proxy_set_header Connection \"\";\n"
		"        proxy_cache offwheel;\n"
		"        proxy_cache_lock on;\n"
		"        proxy_cache_revalidate on;\n"
		"        proxy_cache_use_stale error timeout updating;\n"
		"        proxy_ignore_headers Set-Cookie;\n"
		"        add_header X-Cache $upstream_cache_status;\n";
	ow_str_printf(out,
	             "# nginx: a caching reverse proxy in front of the offwheel export published\n"
	             "# at %s (offwheel export s3://... --nginx-conf).  Include it in the\n"
	             "# http {} block; clients then use\n"
	             "#   pip install --no-index --find-links http://SERVER:8080/wheels/index.html \\\n"
	             "#       --require-hashes -r http://SERVER:8080/requirements/TARGET.txt\n"
	             "# Wheels never change under their name (a new build is a new file name), so\n"
	             "# they are kept for 30 days; pages, lists and the signature change at each\n"
	             "# export and are asked for again after a minute.  Fit the cache path and\n"
	             "# size to the machine.\n"
	             "proxy_cache_path /var/cache/nginx/offwheel levels=1:2 keys_zone=offwheel:16m\n"
	             "                 max_size=200g inactive=60d use_temp_path=off;\n"
	             "server {\n"
	             "    listen 8080;\n"
	             "    server_name _;\n"
	             "    location / {\n", url);
	ow_str_printf(out, loc, path, ol, url);
	ow_str_printf(out, "        proxy_cache_valid 200 1m;\n"
	                   "    }\n"
	                   "    location ~ \\.(whl|metadata)$ {\n");
	ow_str_printf(out, loc, path, ol, url);
	ow_str_printf(out, "        proxy_cache_valid 200 30d;\n"
	                   "    }\n"
	                   "}\n");
	return out->err;
}

int ex_gen_sums(const struct ex_files *f, struct ow_str *out)
{
	for (size_t i = 0; i < f->n; i++)
		ow_str_printf(out, "%s  %s\n", f->v[i].sha256, f->v[i].path);
	return out->err;
}

static int sums_line(const char *l, size_t len, struct ex_files *out, size_t lineno)
{
	char hex[OW_SHA256_HEX], path[4096];
	if (len < 67 || len - 66 >= sizeof path || l[64] != ' ' || (l[65] != ' ' && l[65] != '*'))
		return ow_err(OW_EPARSE, "SHA256SUMS line %zu: not '<sha256>  <path>'", lineno);
	memcpy(hex, l, 64);
	hex[64] = '\0';
	memcpy(path, l + 66, len - 66);
	path[len - 66] = '\0';
	if (!ow_is_sha256_hex(hex) || memchr(path, '\0', len - 66))
		return ow_err(OW_EPARSE, "SHA256SUMS line %zu: not '<sha256>  <path>'", lineno);
	return ex_files_add(out, path, 0, hex);
}

int ex_parse_sums(const char *text, size_t len, struct ex_files *out)
{
	size_t lineno = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return ow_err(OW_EPARSE, "SHA256SUMS: the last line is not terminated");
		int rc = sums_line(p, (size_t)(nl - p), out, ++lineno);
		if (rc)
			return rc;
		p = nl + 1;
	}
	return 0;
}
