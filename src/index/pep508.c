/* pep508.c - requirements and markers.  Markers are parsed by recursive
 * descent into a small node array (bounded count and depth) and evaluated
 * with PEP 508's rules: PEP 440 comparison when the operator and right side
 * form a valid specifier and the left side is a version, Python string
 * comparison otherwise. */
#include "pep508.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "offwheel/error.h"

enum cmp_op { OP_LT, OP_LE, OP_NE, OP_EQ, OP_GE, OP_GT, OP_COMPAT, OP_ARB, OP_IN, OP_NOT_IN };

enum node_kind { N_AND, N_OR, N_CMP };

struct operand {
	bool is_var;
	enum ow_marker_var var;
	char str[OW_MARKER_STR_MAX];
};

struct node {
	enum node_kind kind;
	int left, right; /* N_AND / N_OR: node indexes */
	enum cmp_op op;  /* N_CMP */
	struct operand lhs, rhs;
};

struct ow_marker {
	int root;
	size_t n;
	struct node nodes[];
};

struct mparser {
	const char *s;
	size_t n, i;
	int depth;
	size_t nnodes;
	struct node nodes[OW_MARKER_NODES_MAX];
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

static void skip_ws(struct mparser *p)
{
	while (p->i < p->n && is_space(p->s[p->i]))
		p->i++;
}

static int syntax(const struct mparser *p, const char *why)
{
	return ow_err(OW_EPARSE, "marker '%.*s': %s at offset %zu", (int)(p->n > 200 ? 200 : p->n),
	              p->s, why, p->i);
}

/* Whether keyword `kw` stands at the cursor as a whole word. */
static bool at_keyword(const struct mparser *p, const char *kw)
{
	size_t k = strlen(kw);
	if (p->n - p->i < k || memcmp(p->s + p->i, kw, k) != 0)
		return false;
	return p->i + k == p->n || !is_ident(p->s[p->i + k]);
}

static const struct {
	const char *name;
	enum ow_marker_var var;
} var_names[] = {
#define OW_X_NAME(id, name) {#name, OW_MV_##id},
    OW_MARKER_VARS(OW_X_NAME)
#undef OW_X_NAME
    /* legacy spellings that packaging still accepts */
    {"os.name", OW_MV_OS_NAME},
    {"sys.platform", OW_MV_SYS_PLATFORM},
    {"platform.version", OW_MV_PLATFORM_VERSION},
    {"platform.machine", OW_MV_PLATFORM_MACHINE},
    {"platform.python_implementation", OW_MV_PLATFORM_PYTHON_IMPLEMENTATION},
    {"python_implementation", OW_MV_PLATFORM_PYTHON_IMPLEMENTATION},
};

static int parse_var(struct mparser *p, struct operand *o)
{
	size_t start = p->i;
	while (p->i < p->n && is_ident(p->s[p->i]))
		p->i++;
	size_t k = p->i - start;
	for (size_t v = 0; v < sizeof var_names / sizeof var_names[0]; v++) {
		if (strlen(var_names[v].name) == k && !memcmp(var_names[v].name, p->s + start, k)) {
			o->is_var = true;
			o->var = var_names[v].var;
			return 0;
		}
	}
	p->i = start;
	return syntax(p, k ? "unknown variable" : "expected a variable or a quoted string");
}

static int parse_string(struct mparser *p, struct operand *o)
{
	char q = p->s[p->i++];
	size_t start = p->i;
	while (p->i < p->n && p->s[p->i] != q)
		p->i++;
	if (p->i == p->n)
		return syntax(p, "unterminated string");
	size_t k = p->i - start;
	p->i++;
	if (k >= sizeof o->str)
		return syntax(p, "string too long");
	if (memchr(p->s + start, '\0', k))
		return syntax(p, "NUL in string");
	memcpy(o->str, p->s + start, k);
	o->str[k] = '\0';
	return 0;
}

static int parse_operand(struct mparser *p, struct operand *o)
{
	skip_ws(p);
	memset(o, 0, sizeof *o);
	if (p->i < p->n && (p->s[p->i] == '"' || p->s[p->i] == '\''))
		return parse_string(p, o);
	return parse_var(p, o);
}

static int parse_op(struct mparser *p, enum cmp_op *op)
{
	static const struct {
		const char *text;
		enum cmp_op op;
	} ops[] = {{"===", OP_ARB}, {"==", OP_EQ},     {"!=", OP_NE}, {"<=", OP_LE},
	           {">=", OP_GE},   {"~=", OP_COMPAT}, {"<", OP_LT},  {">", OP_GT}};
	skip_ws(p);
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		size_t len = strlen(ops[k].text);
		if (p->n - p->i >= len && !memcmp(p->s + p->i, ops[k].text, len)) {
			p->i += len;
			*op = ops[k].op;
			return 0;
		}
	}
	if (at_keyword(p, "in")) {
		p->i += 2;
		*op = OP_IN;
		return 0;
	}
	if (at_keyword(p, "not")) {
		p->i += 3;
		skip_ws(p);
		if (at_keyword(p, "in")) {
			p->i += 2;
			*op = OP_NOT_IN;
			return 0;
		}
	}
	return syntax(p, "expected a comparison (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
}

static int new_node(struct mparser *p, enum node_kind kind)
{
	if (p->nnodes == OW_MARKER_NODES_MAX)
		return syntax(p, "too many comparisons");
	memset(&p->nodes[p->nnodes], 0, sizeof p->nodes[0]);
	p->nodes[p->nnodes].kind = kind;
	return (int)p->nnodes++;
}

static int parse_or(struct mparser *p);

static int parse_comparison(struct mparser *p)
{
	int id = new_node(p, N_CMP);
	if (id < 0)
		return id;
	struct node *nd = &p->nodes[id];
	int rc = parse_operand(p, &nd->lhs);
	if (rc == 0)
		rc = parse_op(p, &nd->op);
	if (rc == 0)
		rc = parse_operand(p, &nd->rhs);
	return rc < 0 ? rc : id;
}

static int parse_atom(struct mparser *p)
{
	skip_ws(p);
	if (p->i >= p->n || p->s[p->i] != '(')
		return parse_comparison(p);
	if (++p->depth > OW_MARKER_DEPTH_MAX)
		return syntax(p, "parentheses nested too deep");
	p->i++;
	int id = parse_or(p);
	if (id < 0)
		return id;
	skip_ws(p);
	if (p->i >= p->n || p->s[p->i] != ')')
		return syntax(p, "expected ')'");
	p->i++;
	p->depth--;
	return id;
}

/* A chain "x kw y kw z" of one keyword, built left to right. */
static int parse_chain(struct mparser *p, const char *kw, enum node_kind kind,
                       int (*sub)(struct mparser *))
{
	int left = sub(p);
	for (;;) {
		if (left < 0)
			return left;
		skip_ws(p);
		if (!at_keyword(p, kw))
			return left;
		p->i += strlen(kw);
		int right = sub(p);
		if (right < 0)
			return right;
		int id = new_node(p, kind);
		if (id < 0)
			return id;
		p->nodes[id].left = left;
		p->nodes[id].right = right;
		left = id;
	}
}

static int parse_and(struct mparser *p)
{
	return parse_chain(p, "and", N_AND, parse_atom);
}

static int parse_or(struct mparser *p)
{
	return parse_chain(p, "or", N_OR, parse_and);
}

static int marker_parse_n(struct ow_marker **out, const char *text, size_t len)
{
	struct mparser *p = calloc(1, sizeof *p);
	*out = NULL;
	if (!p)
		return ow_err(OW_ENOMEM, "marker: out of memory");
	p->s = text;
	p->n = len;
	int root = parse_or(p);
	skip_ws(p);
	if (root >= 0 && p->i != p->n)
		root = syntax(p, "unexpected text (expected 'and', 'or' or the end)");
	struct ow_marker *m = root < 0 ? NULL : malloc(sizeof *m + p->nnodes * sizeof m->nodes[0]);
	if (root >= 0 && !m)
		root = ow_err(OW_ENOMEM, "marker: out of memory");
	if (m) {
		m->root = root;
		m->n = p->nnodes;
		memcpy(m->nodes, p->nodes, p->nnodes * sizeof m->nodes[0]);
		*out = m;
	}
	free(p);
	return root < 0 ? root : 0;
}

int ow_marker_parse(struct ow_marker **out, const char *text)
{
	size_t len = strnlen(text, OW_REQ_TEXT_MAX + 1);
	*out = NULL;
	if (len > OW_REQ_TEXT_MAX)
		return ow_err(OW_EPARSE, "marker: longer than %d characters", OW_REQ_TEXT_MAX);
	return marker_parse_n(out, text, len);
}

void ow_marker_free(struct ow_marker *m)
{
	free(m);
}

/* ---- evaluation ------------------------------------------------------- */

/* PEP 685: extra names compare in their PEP 503 form. */
static void normalize_extra(const char *in, char *out, size_t cap)
{
	if (ow_name_normalize(in, strlen(in), out, cap) < 0)
		snprintf(out, cap, "%s", in);
}

static void operand_value(const struct operand *o, const struct operand *other,
                          const struct ow_marker_env *env, const char *extra, char *out, size_t cap)
{
	if (o->is_var && o->var == OW_MV_EXTRA)
		normalize_extra(extra ? extra : "", out, cap);
	else if (o->is_var)
		snprintf(out, cap, "%s", env->value[o->var]);
	else if (other->is_var && other->var == OW_MV_EXTRA)
		normalize_extra(o->str, out, cap);
	else
		snprintf(out, cap, "%s", o->str);
}

static const char *const op_texts[] = {
    "<", "<=", "!=", "==", ">=", ">", "~=", "===", "in", "not in"};

/* 1/0 when both sides are versions for this operator, -1 otherwise. */
static int compare_versions(const char *lhs, enum cmp_op op, const char *rhs)
{
	char text[OW_MARKER_STR_MAX + 8];
	struct ow_specset set;
	struct ow_version v;
	if (op == OP_ARB || op >= OP_IN)
		return -1;
	snprintf(text, sizeof text, "%s%s", op_texts[op], rhs);
	if (ow_spec_parse(&set, text) < 0 || set.n != 1 || ow_pep440_parse(&v, lhs) < 0)
		return -1;
	return ow_spec_match(&set.specs[0], &v) ? 1 : 0;
}

static int compare_strings(const char *lhs, enum cmp_op op, const char *rhs, bool *res)
{
	int c = strcmp(lhs, rhs);
	switch (op) {
	case OP_LT:
		*res = c < 0;
		return 0;
	case OP_LE:
		*res = c <= 0;
		return 0;
	case OP_NE:
		*res = c != 0;
		return 0;
	case OP_EQ:
	case OP_ARB:
		*res = c == 0;
		return 0;
	case OP_GE:
		*res = c >= 0;
		return 0;
	case OP_GT:
		*res = c > 0;
		return 0;
	case OP_IN:
		*res = strstr(rhs, lhs) != NULL;
		return 0;
	case OP_NOT_IN:
		*res = strstr(rhs, lhs) == NULL;
		return 0;
	case OP_COMPAT:
		break;
	}
	return ow_err(OW_EINVAL, "marker: '%s ~= %s' is undefined: ~= needs versions on both sides",
	              lhs, rhs);
}

static int eval_cmp(const struct node *nd, const struct ow_marker_env *env, const char *extra,
                    bool *res)
{
	char lhs[OW_MARKER_STR_MAX], rhs[OW_MARKER_STR_MAX];
	operand_value(&nd->lhs, &nd->rhs, env, extra, lhs, sizeof lhs);
	operand_value(&nd->rhs, &nd->lhs, env, extra, rhs, sizeof rhs);
	int v = compare_versions(lhs, nd->op, rhs);
	if (v >= 0) {
		*res = v == 1;
		return 0;
	}
	return compare_strings(lhs, nd->op, rhs, res);
}

static int eval_node(const struct ow_marker *m, int id, const struct ow_marker_env *env,
                     const char *extra, bool *res)
{
	const struct node *nd = &m->nodes[id];
	bool l, r;
	if (nd->kind == N_CMP)
		return eval_cmp(nd, env, extra, res);
	int rc = eval_node(m, nd->left, env, extra, &l);
	if (rc == 0)
		rc = eval_node(m, nd->right, env, extra, &r);
	if (rc == 0)
		*res = nd->kind == N_AND ? (l && r) : (l || r);
	return rc;
}

int ow_marker_eval(const struct ow_marker *m, const struct ow_marker_env *env, const char *extra,
                   bool *result)
{
	*result = true;
	return m ? eval_node(m, m->root, env, extra, result) : 0;
}

/* ---- the environment of a target ---------------------------------------- */

static void set_value(struct ow_marker_env *env, enum ow_marker_var var, const char *s)
{
	snprintf(env->value[var], sizeof env->value[var], "%s", s);
}

static const char *windows_machine(const char *arch)
{
	if (strcmp(arch, "amd64") == 0)
		return "AMD64";
	if (strcmp(arch, "arm64") == 0)
		return "ARM64";
	return "x86";
}

static void set_os(struct ow_marker_env *env, const struct ow_target *t)
{
	static const char *const sys[][3] = {
	    [OW_OS_LINUX] = {"Linux", "linux", "posix"},
	    [OW_OS_WINDOWS] = {"Windows", "win32", "nt"},
	    [OW_OS_MACOS] = {"Darwin", "darwin", "posix"},
	};
	set_value(env, OW_MV_PLATFORM_SYSTEM, sys[t->os][0]);
	set_value(env, OW_MV_SYS_PLATFORM, sys[t->os][1]);
	set_value(env, OW_MV_OS_NAME, sys[t->os][2]);
	set_value(env, OW_MV_PLATFORM_MACHINE,
	          t->os == OW_OS_WINDOWS ? windows_machine(t->arch) : t->arch);
}

void ow_marker_env_for_target(struct ow_marker_env *env, const struct ow_target *t)
{
	memset(env, 0, sizeof *env);
	snprintf(env->value[OW_MV_PYTHON_VERSION], sizeof env->value[0], "%d.%d", t->py_major,
	         t->py_minor);
	snprintf(env->value[OW_MV_PYTHON_FULL_VERSION], sizeof env->value[0], "%d.%d.%d",
	         t->py_major, t->py_minor, t->py_patch);
	memcpy(env->value[OW_MV_IMPLEMENTATION_VERSION], env->value[OW_MV_PYTHON_FULL_VERSION],
	       sizeof env->value[0]);
	set_value(env, OW_MV_IMPLEMENTATION_NAME, "cpython");
	set_value(env, OW_MV_PLATFORM_PYTHON_IMPLEMENTATION, "CPython");
	set_os(env, t);
}

/* ---- requirements ----------------------------------------------------- */

struct rparser {
	const char *s;
	size_t n, i;
};

static void rskip(struct rparser *p)
{
	while (p->i < p->n && is_space(p->s[p->i]))
		p->i++;
}

static bool is_name_char(char c)
{
	return is_ident(c) || c == '-';
}

static int req_error(const struct rparser *p, const char *why)
{
	return ow_err(OW_EPARSE, "requirement '%.*s': %s", (int)(p->n > 200 ? 200 : p->n), p->s,
	              why);
}

static int parse_name(struct rparser *p, char *out, size_t cap)
{
	size_t start = p->i;
	while (p->i < p->n && is_name_char(p->s[p->i]))
		p->i++;
	if (p->i == start)
		return req_error(p, "expected a project name");
	return ow_name_normalize(p->s + start, p->i - start, out, cap);
}

static int parse_extras(struct rparser *p, struct ow_requirement *r)
{
	p->i++; /* '[' */
	rskip(p);
	if (p->i < p->n && p->s[p->i] == ']') {
		p->i++;
		return 0;
	}
	for (;;) {
		if (r->nextras == OW_REQ_EXTRAS_MAX)
			return req_error(p, "more than 256 extras");
		char(*grown)[OW_NAME_MAX] = ow_array_more(r->extras, r->nextras, sizeof *r->extras);
		if (!grown)
			return ow_err(OW_ENOMEM, "requirement: out of memory for its extras");
		r->extras = grown;
		rskip(p);
		int rc = parse_name(p, r->extras[r->nextras], OW_NAME_MAX);
		if (rc < 0)
			return rc;
		r->nextras++;
		rskip(p);
		char c = p->i < p->n ? p->s[p->i++] : '\0';
		if (c == ']')
			return 0;
		if (c != ',')
			return req_error(p, "expected ',' or ']' in the extras");
	}
}

static int parse_url(struct rparser *p, struct ow_requirement *r)
{
	p->i++; /* '@' */
	rskip(p);
	size_t start = p->i;
	while (p->i < p->n && !is_space(p->s[p->i]))
		p->i++;
	size_t k = p->i - start;
	if (k == 0)
		return req_error(p, "'@' without a URL");
	if (k >= sizeof r->url)
		return req_error(p, "URL too long");
	memcpy(r->url, p->s + start, k);
	r->url[k] = '\0';
	r->has_url = true;
	return 0;
}

static int parse_versionspec(struct rparser *p, struct ow_requirement *r)
{
	bool paren = p->i < p->n && p->s[p->i] == '(';
	size_t start = p->i + paren;
	const char *end = paren ? memchr(p->s + start, ')', p->n - start)
	                        : memchr(p->s + start, ';', p->n - start);
	size_t stop = end ? (size_t)(end - p->s) : p->n;
	if (paren && !end)
		return req_error(p, "missing ')'");
	int rc = ow_spec_parse_n(&r->spec, p->s + start, stop - start);
	if (rc < 0)
		return ow_err_prefix(rc, "requirement '%.*s': ", (int)(p->n > 200 ? 200 : p->n),
		                     p->s);
	p->i = stop + paren;
	return 0;
}

static int parse_marker_part(struct rparser *p, struct ow_requirement *r)
{
	rskip(p);
	if (p->i == p->n)
		return 0;
	if (p->s[p->i] != ';')
		return req_error(p, "unexpected text (expected ';' and a marker, or the end)");
	p->i++;
	int rc = marker_parse_n(&r->marker, p->s + p->i, p->n - p->i);
	if (rc < 0)
		return ow_err_prefix(rc, "requirement '%.*s': ", (int)(p->n > 200 ? 200 : p->n),
		                     p->s);
	return 0;
}

static int parse_requirement(struct rparser *p, struct ow_requirement *r)
{
	rskip(p);
	int rc = parse_name(p, r->name, sizeof r->name);
	if (rc < 0)
		return rc;
	rskip(p);
	if (p->i < p->n && p->s[p->i] == '[' && (rc = parse_extras(p, r)) < 0)
		return rc;
	rskip(p);
	if (p->i < p->n && p->s[p->i] == '@')
		rc = parse_url(p, r);
	else
		rc = parse_versionspec(p, r);
	return rc < 0 ? rc : parse_marker_part(p, r);
}

int ow_requirement_parse(struct ow_requirement *r, const char *line)
{
	size_t len = strnlen(line, OW_REQ_TEXT_MAX + 1);
	memset(r, 0, sizeof *r);
	if (len > OW_REQ_TEXT_MAX)
		return ow_err(OW_EPARSE, "requirement '%.40s...': longer than %d characters", line,
		              OW_REQ_TEXT_MAX);
	while (len > 0 &&
	       (is_space(line[len - 1]) || line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	struct rparser p = {line, len, 0};
	int rc = parse_requirement(&p, r);
	if (rc < 0)
		ow_requirement_dispose(r);
	return rc;
}

int ow_requirement_applies(const struct ow_requirement *r, const struct ow_marker_env *env,
                           const char *extra, bool *result)
{
	return ow_marker_eval(r->marker, env, extra, result);
}

void ow_requirement_dispose(struct ow_requirement *r)
{
	if (!r)
		return;
	ow_marker_free(r->marker);
	r->marker = NULL;
	free(r->extras);
	r->extras = NULL;
	r->nextras = 0;
}
