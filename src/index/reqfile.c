/* reqfile.c - pip requirement files, read as pip reads them (reqfile.h has
 * the rules, in order). */
#include "reqfile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"
#include "offwheel/str.h"

/* One file being read; `up` is the file that included it. */
struct rf_file {
	struct ow_reqfile *rf;
	const struct ow_reqfile_io *io;
	const char *path;
	bool constraint;
	int depth;
	const struct rf_file *up;
	unsigned line; /* where the logical line being parsed starts */
};

/* Words of the options part of a line, split as a POSIX shell would split
 * them (quotes group, backslash escapes outside single quotes). */
struct rf_words {
	char **v;
	size_t n;
};

static int rf_fail(const struct rf_file *f, const char *fmt, const char *arg)
{
	return ow_err(OW_EINVAL, "%s:%u: %s%s", f->path, f->line, fmt, arg ? arg : "");
}

static int push_str(char ***v, size_t *n, const char *s, size_t len)
{
	char *d = strndup(s, len);
	char **g = d ? ow_array_more(*v, *n, sizeof **v) : NULL;
	if (!g) {
		free(d);
		return ow_err(OW_ENOMEM, "requirement file: out of memory");
	}
	*v = g;
	(*v)[(*n)++] = d;
	/* analyzer: kept in (*v)[*n - 1], freed with the array's owner (ow_reqfile_dispose) */
	return 0;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void words_free(struct rf_words *w)
{
	free_strs(w->v, w->n);
	w->v = NULL;
	w->n = 0;
}

/* One shell word from *pp into b; returns -1 on an unclosed quote. */
static int shell_word(const char **pp, struct ow_str *b)
{
	const char *p = *pp;
	char q = 0;
	for (; *p && (q || !isspace((unsigned char)*p)); p++) {
		if (q == '\'' && *p == '\'')
			q = 0;
		else if (q == '"' && *p == '"')
			q = 0;
		else if (!q && (*p == '\'' || *p == '"'))
			q = *p;
		else if (q != '\'' && *p == '\\' && p[1])
			ow_str_put(b, ++p, 1);
		else
			ow_str_put(b, p, 1);
	}
	*pp = p;
	return q ? -1 : 0;
}

static int split_words(const struct rf_file *f, const char *s, struct rf_words *w)
{
	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			return 0;
		struct ow_str b = {0};
		int bad = shell_word(&s, &b);
		ow_str_put(&b, "", 0);
		int rc = bad ? rf_fail(f, "unclosed quote in the options", NULL)
		             : b.err ? b.err : push_str(&w->v, &w->n, b.p ? b.p : "", b.n);
		ow_str_dispose(&b);
		if (rc < 0)
			return rc;
	}
}

/* --opt=VALUE, --opt VALUE, -xVALUE, -x VALUE: the value of option word
 * w->v[*i] when it is `shortopt` or `longopt`; NULL when it is not that
 * option; sets *missing when the value is absent. */
static const char *opt_value(const struct rf_words *w, size_t *i, const char *shortopt,
                             const char *longopt, bool *missing)
{
	const char *a = w->v[*i];
	size_t ll = strlen(longopt);
	if (!strncmp(a, longopt, ll) && (a[ll] == '=' || !a[ll])) {
		if (a[ll] == '=')
			return a + ll + 1;
	} else if (shortopt && !strncmp(a, shortopt, 2)) {
		if (a[2])
			return a + 2;
	} else {
		return NULL;
	}
	if (*i + 1 < w->n)
		return w->v[++*i];
	*missing = true;
	return "";
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return s[n] == '\0';
}

/* ALG:HEX as pip takes it: sha256, sha384 or sha512 with the digest's length. */
static int add_hash(const struct rf_file *f, struct ow_reqline *l, const char *v)
{
	static const struct {
		const char *alg;
		size_t hex;
	} algs[] = {{"sha256:", 64}, {"sha384:", 96}, {"sha512:", 128}};
	for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++) {
		size_t al = strlen(algs[k].alg);
		if (strncmp(v, algs[k].alg, al) || !is_hex(v + al, algs[k].hex) ||
		    strlen(v + al) != algs[k].hex)
			continue;
		if (l->nhashes >= OW_REQFILE_HASHES_MAX)
			return rf_fail(f, "too many --hash options for one requirement", NULL);
		int rc = push_str(&l->hashes, &l->nhashes, v, strlen(v));
		if (rc < 0)
			return rc;
		for (char *c = l->hashes[l->nhashes - 1]; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		return 0;
	}
	return rf_fail(f, "--hash must be sha256:, sha384: or sha512: and the digest in hex, not ",
	               v);
}

/* The options after a requirement: --hash, and build settings that do not
 * matter to a wheel (--config-settings, --global-option). */
static int req_options(const struct rf_file *f, struct ow_reqline *l, const struct rf_words *w)
{
	for (size_t i = 0; i < w->n; i++) {
		bool missing = false;
		const char *v = opt_value(w, &i, NULL, "--hash", &missing);
		if (v && !missing) {
			int rc = add_hash(f, l, v);
			if (rc < 0)
				return rc;
			continue;
		}
		if (v)
			return rf_fail(f, "--hash needs a value (--hash=sha256:...)", NULL);
		if ((v = opt_value(w, &i, NULL, "--config-settings", &missing)) ||
		    (v = opt_value(w, &i, NULL, "--global-option", &missing)))
			continue; /* for building from source; wheels need none */
		return rf_fail(f, "unknown option after a requirement: ", w->v[i]);
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* What pip would take for a file, a folder or a URL rather than a name. */
static bool looks_like_path(const char *s)
{
	static const char *const archives[] = {".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2",
	                                       ".tar.xz", ".tar"};
	if (s[0] == '.' || s[0] == '/' || s[0] == '~' || strchr(s, '\\'))
		return true;
	if (strchr(s, '@') || strchr(s, ';'))
		return false; /* name @ URL, or a marker: the requirement parser decides */
	if (strchr(s, '/'))
		return true;
	for (size_t i = 0; i < sizeof archives / sizeof archives[0]; i++)
		if (ends_with(s, archives[i]))
			return true;
	return false;
}

/* Whether line l repeats line k (the same text, kind and hashes). */
static bool same_line(const struct ow_reqline *k, const struct ow_reqline *l)
{
	if (k->constraint != l->constraint || k->nhashes != l->nhashes)
		return false;
	for (size_t i = 0; i < l->nhashes; i++)
		if (strcmp(k->hashes[i], l->hashes[i]))
			return false;
	return true;
}

static void line_free(struct ow_reqline *l)
{
	free_strs(l->hashes, l->nhashes);
	free(l->where);
	free(l->text);
	memset(l, 0, sizeof *l);
}

/* A project required for the first time is counted: the one past
 * OW_REQFILE_PROJECTS_MAX is refused at once, before the rest is read. */
static int count_project(struct rf_file *f, const char *name)
{
	struct ow_reqfile *rf = f->rf;
	if (f->constraint || ow_strmap_find(&rf->by_name, name))
		return 0;
	if (rf->nnames == OW_REQFILE_PROJECTS_MAX)
		return ow_err(OW_ETOOBIG, "%s:%u: %s: more than %d projects required (the most one "
		                          "resolve takes); split the stack",
		              f->path, f->line, name, OW_REQFILE_PROJECTS_MAX);
	int rc = push_str(&rf->names, &rf->nnames, name, strlen(name));
	return rc < 0 ? rc : ow_strmap_add(&rf->by_name, rf->names[rf->nnames - 1], rf->nnames - 1);
}

/* Line l (parsed, at the end of rf->lines) kept, or dropped as a repeat. */
static int keep_line(struct rf_file *f, struct ow_reqline *l)
{
	struct ow_reqfile *rf = f->rf;
	const size_t *k = ow_strmap_find(&rf->by_text, l->text);
	if (k && same_line(&rf->lines[*k], l)) {
		line_free(l);
		return 0;
	}
	if (rf->nlines == OW_REQFILE_LINES_MAX) {
		line_free(l);
		return ow_err(OW_ETOOBIG, "%s:%u: more than %d requirement lines (the most offwheel "
		                          "reads)",
		              f->path, f->line, OW_REQFILE_LINES_MAX);
	}
	int rc = count_project(f, l->name);
	if (rc < 0) {
		line_free(l);
		return rc;
	}
	rf->nlines++; /* from here on it is the reqfile's to free */
	return k ? 0 : ow_strmap_add(&rf->by_text, l->text, rf->nlines - 1);
}

/* The requirement `text` checked (parsed, then only its name kept). */
static int check_requirement(struct rf_file *f, const char *text, char *name)
{
	if (looks_like_path(text))
		return rf_fail(f, "a path or URL is not a requirement offwheel can resolve; "
		                  "name the project and its version instead: ",
		               text);
	struct ow_requirement *r = malloc(sizeof *r);
	if (!r)
		return ow_err(OW_ENOMEM, "requirement file: out of memory");
	int rc = ow_requirement_parse(r, text);
	if (rc < 0) {
		free(r);
		return ow_err_prefix(OW_EINVAL, "%s:%u: ", f->path, f->line);
	}
	if (r->has_url)
		rc = rf_fail(f, "a direct URL (name @ URL) cannot be resolved from an index; "
		                "name the version instead: ",
		             text);
	else if (f->constraint && r->nextras) /* pip: "Constraints cannot have extras" */
		rc = rf_fail(f, "a constraint cannot have extras (pip refuses it too): constrain the "
		                "project without [...], and ask for its extras in a requirement: ",
		             text);
	memcpy(name, r->name, OW_NAME_MAX);
	ow_requirement_dispose(r);
	free(r);
	return rc;
}

static int add_requirement(struct rf_file *f, const char *text, const struct rf_words *w)
{
	char name[OW_NAME_MAX];
	int rc = check_requirement(f, text, name);
	if (rc < 0)
		return rc;
	struct ow_reqline *g = ow_array_more(f->rf->lines, f->rf->nlines, sizeof *g);
	if (!g)
		return ow_err(OW_ENOMEM, "requirement file: out of memory");
	f->rf->lines = g;
	struct ow_reqline *l = &g[f->rf->nlines];
	memset(l, 0, sizeof *l);
	memcpy(l->name, name, sizeof l->name);
	struct ow_str b = {0};
	ow_str_printf(&b, "%s:%u", f->path, f->line);
	rc = ow_str_take(&b, &l->where);
	if (rc == 0 && !(l->text = strdup(text)))
		rc = ow_err(OW_ENOMEM, "requirement file: out of memory");
	l->constraint = f->constraint;
	if (rc == 0)
		rc = req_options(f, l, w);
	if (rc < 0) {
		line_free(l);
		return rc;
	}
	return keep_line(f, l);
}

static int read_file(struct ow_reqfile *rf, const char *from, const char *ref, bool constraint,
                     const struct ow_reqfile_io *io, int depth, const struct rf_file *up);

static int include(struct rf_file *f, const char *ref, bool constraint)
{
	if (f->depth >= OW_REQFILE_DEPTH_MAX)
		return rf_fail(f, "requirement files nested too deep, at ", ref);
	/* pip's rule: what a file includes is requirements after -r and
	 * constraints after -c, whatever the including file is */
	return read_file(f->rf, f->path, ref, constraint, f->io, f->depth + 1, f);
}

static int add_url(const struct rf_file *f, char **one, char ***v, size_t *n, const char *url)
{
	if (!*url)
		return rf_fail(f, "an index option needs a URL", NULL);
	if (one) {
		free(*one);
		*one = strdup(url);
		return *one ? 0 : ow_err(OW_ENOMEM, "requirement file: out of memory");
	}
	return push_str(v, n, url, strlen(url));
}

/* pip's hash-checking mode, remembering the first line that asked for it. */
static int require_hashes(struct rf_file *f)
{
	f->rf->require_hashes = true;
	if (f->rf->require_hashes_at)
		return 0;
	struct ow_str b = {0};
	ow_str_printf(&b, "%s:%u", f->path, f->line);
	return ow_str_take(&b, &f->rf->require_hashes_at);
}

/* Options that shape the whole run; returns 1 when w->v[*i] is not one. */
static int run_option(struct rf_file *f, const struct rf_words *w, size_t *i)
{
	struct ow_reqfile *rf = f->rf;
	bool miss = false;
	const char *v;
	if ((v = opt_value(w, i, "-r", "--requirement", &miss)))
		return miss ? rf_fail(f, "-r needs a file name", NULL) : include(f, v, false);
	if ((v = opt_value(w, i, "-c", "--constraint", &miss)))
		return miss ? rf_fail(f, "-c needs a file name", NULL) : include(f, v, true);
	if ((v = opt_value(w, i, "-i", "--index-url", &miss)))
		return add_url(f, &rf->index_url, NULL, NULL, v);
	if ((v = opt_value(w, i, NULL, "--extra-index-url", &miss)))
		return add_url(f, NULL, &rf->extra_index_urls, &rf->nextra, v);
	if ((v = opt_value(w, i, NULL, "--trusted-host", &miss)))
		return add_url(f, NULL, &rf->trusted_hosts, &rf->ntrusted, v);
	const char *a = w->v[*i];
	if (!strcmp(a, "--no-index"))
		return rf->no_index = true, 0;
	if (!strcmp(a, "--pre"))
		return rf->pre = true, 0;
	if (!strcmp(a, "--require-hashes"))
		return require_hashes(f);
	if (!strcmp(a, "--prefer-binary"))
		return 0; /* offwheel takes only wheels anyway */
	if ((v = opt_value(w, i, NULL, "--only-binary", &miss)) ||
	    (v = opt_value(w, i, NULL, "--use-feature", &miss)))
		return 0; /* only wheels: what offwheel does */
	return 1;
}

static int refused_option(struct rf_file *f, const char *a)
{
	if (!strncmp(a, "-e", 2) || !strncmp(a, "--editable", 10))
		return rf_fail(f, "editable installs (-e) need the source tree on the target; "
		                  "offwheel carries wheels: name the project and version instead",
		               NULL);
	if (!strncmp(a, "--no-binary", 11))
		return rf_fail(f, "--no-binary asks for building from source; offwheel carries "
		                  "wheels: remove the option",
		               NULL);
	if (!strncmp(a, "-f", 2) || !strncmp(a, "--find-links", 12))
		return rf_fail(f, "-f/--find-links is not supported in a requirements file; give "
		                  "the source on the command line (--find-links URL|DIR, with "
		                  "--no-index to read only it)",
		               NULL);
	return rf_fail(f, "unknown option: ", a);
}

static int line_options(struct rf_file *f, const struct rf_words *w)
{
	for (size_t i = 0; i < w->n; i++) {
		int rc = run_option(f, w, &i);
		if (rc > 0)
			rc = refused_option(f, w->v[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Step 5: the words before the first "-" word are the requirement. */
static int parse_logical(struct rf_file *f, const char *line)
{
	const char *p = line, *opts = NULL;
	while (*p) {
		const char *word = p;
		p += strcspn(p, " ");
		if (*word == '-') {
			opts = word;
			break;
		}
		p += strspn(p, " ");
	}
	size_t reqlen = opts ? (size_t)(opts - line) : strlen(line);
	while (reqlen && line[reqlen - 1] == ' ')
		reqlen--;
	struct rf_words w = {0};
	int rc = opts ? split_words(f, opts, &w) : 0;
	if (rc == 0 && reqlen) {
		char *req = strndup(line, reqlen);
		rc = req ? add_requirement(f, req, &w) : ow_err(OW_ENOMEM, "out of memory");
		free(req);
	} else if (rc == 0) {
		rc = line_options(f, &w);
	}
	words_free(&w);
	return rc;
}

/* Step 4: ${NAME} from the environment, when set and not empty. */
static void expand_env(const struct rf_file *f, const char *s, struct ow_str *out)
{
	while (*s) {
		size_t n = 0;
		if (s[0] == '$' && s[1] == '{') {
			while (isupper((unsigned char)s[2 + n]) || isdigit((unsigned char)s[2 + n]) ||
			       s[2 + n] == '_')
				n++;
		}
		const char *val = NULL;
		if (n && s[2 + n] == '}' && f->io && f->io->getenv) {
			char name[256];
			if (n < sizeof name) {
				memcpy(name, s + 2, n);
				name[n] = '\0';
				val = f->io->getenv(f->io->ud, name);
			}
		}
		if (val && *val) {
			ow_str_puts(out, val);
			s += n + 3;
		} else {
			ow_str_put(out, s++, 1);
		}
	}
}

/* Step 3: cut "#..." at the start or after a blank; trim. */
static void cut_comment(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			break;
		}
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

static int finish_logical(struct rf_file *f, struct ow_str *joined)
{
	if (joined->err)
		return joined->err;
	if (!joined->p)
		return 0;
	cut_comment(joined->p);
	const char *s = joined->p;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return 0;
	struct ow_str exp = {0};
	expand_env(f, s, &exp);
	int rc = exp.err ? exp.err : parse_logical(f, exp.p);
	ow_str_dispose(&exp);
	return rc;
}

static bool is_comment_line(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	return i < n && s[i] == '#';
}

/* Steps 1 and 2: physical lines joined at a trailing "\". */
static int parse_text(struct rf_file *f, const char *text, size_t len)
{
	struct ow_str joined = {0};
	unsigned lineno = 0;
	bool open = false; /* a "\" line is waiting for its continuation */
	int rc = 0;
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
		text += 3, len -= 3;
	for (size_t i = 0; i < len && rc == 0;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - i;
		const char *s = text + i;
		lineno++;
		if (n && s[n - 1] == '\r')
			n--;
		if (memchr(s, '\0', n))
			rc = ow_err(OW_EINVAL, "%s:%u: a NUL byte: not a text file", f->path, lineno);
		bool cont = n && s[n - 1] == '\\' && !is_comment_line(s, n);
		if (!open)
			f->line = lineno;
		if (rc == 0 && cont) {
			ow_str_put(&joined, s, n - 1);
			open = true;
		} else if (rc == 0) {
			if (open && is_comment_line(s, n))
				ow_str_put(&joined, " ", 1); /* the comment ends the joined line */
			ow_str_put(&joined, s, n);
			rc = finish_logical(f, &joined);
			ow_str_dispose(&joined);
			open = false;
		}
		i = end + 1;
	}
	if (rc == 0 && open)
		rc = finish_logical(f, &joined);
	ow_str_dispose(&joined);
	return rc;
}

static int check_loop(const struct rf_file *up, const char *path, const char *ref)
{
	for (const struct rf_file *u = up; u; u = u->up)
		if (!strcmp(u->path, path))
			return ow_err(OW_EINVAL, "%s:%u: '%s' includes itself (through %s)", up->path,
			              up->line, ref, path);
	return 0;
}

static int read_file(struct ow_reqfile *rf, const char *from, const char *ref, bool constraint,
                     const struct ow_reqfile_io *io, int depth, const struct rf_file *up)
{
	char *path = NULL, *text = NULL;
	size_t len = 0;
	if (rf->nfiles >= OW_REQFILE_FILES_MAX)
		return ow_err(OW_EINVAL, "%s: more than %d requirement files included", from ? from : ref,
		              OW_REQFILE_FILES_MAX);
	int rc = io->read(io->ud, from, ref, &path, &text, &len);
	if (rc < 0 && up) /* name the line that asked for it */
		rc = ow_err_prefix(rc, "%s:%u: -%c %s: ", up->path, up->line, constraint ? 'c' : 'r',
		                   ref);
	if (rc == 0 && len > OW_REQFILE_SIZE_MAX)
		rc = ow_err(OW_EINVAL, "%s: larger than %d MiB: not a requirements file", path,
		            OW_REQFILE_SIZE_MAX >> 20);
	if (rc == 0)
		rc = check_loop(up, path, ref);
	if (rc == 0 && (rc = push_str(&rf->files, &rf->nfiles, path, strlen(path))) == 0) {
		struct rf_file f = {rf, io, rf->files[rf->nfiles - 1], constraint, depth, up, 0};
		rc = parse_text(&f, text, len);
	}
	free(path);
	free(text);
	return rc;
}

int ow_reqfile_read(struct ow_reqfile *rf, const char *ref, bool constraint,
                    const struct ow_reqfile_io *io)
{
	return read_file(rf, NULL, ref, constraint, io, 0, NULL);
}

int ow_reqfile_parse(struct ow_reqfile *rf, const char *path, const char *text, size_t len,
                     bool constraint, const struct ow_reqfile_io *io)
{
	int rc = push_str(&rf->files, &rf->nfiles, path, strlen(path));
	if (rc < 0)
		return rc;
	struct rf_file f = {rf, io, rf->files[rf->nfiles - 1], constraint, 0, NULL, 0};
	return parse_text(&f, text, len);
}

void ow_reqfile_dispose(struct ow_reqfile *rf)
{
	if (!rf)
		return;
	for (size_t i = 0; i < rf->nlines; i++)
		line_free(&rf->lines[i]);
	free(rf->lines);
	ow_strmap_dispose(&rf->by_text);
	ow_strmap_dispose(&rf->by_name);
	free_strs(rf->names, rf->nnames);
	free(rf->index_url);
	free(rf->require_hashes_at);
	free_strs(rf->extra_index_urls, rf->nextra);
	free_strs(rf->trusted_hosts, rf->ntrusted);
	free_strs(rf->files, rf->nfiles);
	memset(rf, 0, sizeof *rf);
}
