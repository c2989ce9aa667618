/* jsonschema.c - check a --json document against the command's schema.
 *
 * The shapes of every command's --json output are written down as JSON
 * Schema files in docs/json/ (one per command, "ls files" ->
 * ls_files.schema.json).  With $OFFWHEEL_SCHEMA_DIR set (the test suite sets
 * it for every test), each document is checked before it is printed, so a
 * field that changes type or a key that appears undocumented fails the test
 * that made it.  The subset of JSON Schema understood: type (a name or a
 * list), properties, required, additionalProperties (false or a schema),
 * items, enum, minimum, and $ref to "#/$defs/NAME" of the same file. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check {
	json_t *root; /* the schema file, for $ref */
	char *err;
	size_t errn;
	char path[512];
};

static int fail(struct check *k, const char *fmt, ...) OW_PRINTF(2, 3);
static int fail(struct check *k, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(k->err, k->errn, "%s: ", *k->path ? k->path : "(document)");
	if (n > 0 && (size_t)n < k->errn) {
		va_start(ap, fmt);
		vsnprintf(k->err + n, k->errn - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const char *type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}

static int type_ok(const json_t *want, const json_t *v)
{
	const char *t = type_of(v);
	if (json_is_string(want)) {
		const char *w = json_string_value(want);
		return !strcmp(w, t) || (!strcmp(w, "number") && !strcmp(t, "integer"));
	}
	size_t i;
	json_t *e;
	json_array_foreach(want, i, e)
		if (type_ok(e, v))
			return 1;
	return 0;
}

static int validate(struct check *k, const json_t *schema, json_t *v);

static const json_t *deref(struct check *k, const json_t *schema)
{
	const char *ref = json_string_value(json_object_get(schema, "$ref"));
	if (!ref || strncmp(ref, "#/$defs/", 8))
		return schema;
	return json_object_get(json_object_get(k->root, "$defs"), ref + 8);
}

/* Extend the path shown in errors by ".key" (or "key" at the top) or
 * "[i]"; *save is where to cut it back. */
static void push(struct check *k, const char *key, size_t idx, size_t *save)
{
	*save = strlen(k->path);
	if (key)
		snprintf(k->path + *save, sizeof k->path - *save, "%s%s", *save ? "." : "", key);
	else
		snprintf(k->path + *save, sizeof k->path - *save, "[%zu]", idx);
}

static int check_object(struct check *k, const json_t *schema, json_t *v)
{
	const json_t *props = json_object_get(schema, "properties");
	const json_t *extra = json_object_get(schema, "additionalProperties");
	size_t i, save;
	json_t *e;
	json_array_foreach(json_object_get(schema, "required"), i, e)
		if (!json_object_get(v, json_string_value(e)))
			return fail(k, "required key \"%s\" is missing", json_string_value(e));
	const char *key;
	json_t *val;
	json_object_foreach(v, key, val) {
		const json_t *sub = props ? json_object_get(props, key) : NULL;
		if (!sub && json_is_false(extra))
			return fail(k, "key \"%s\" is not in the schema", key);
		if (!sub && json_is_object(extra))
			sub = extra;
		if (!sub)
			continue;
		push(k, key, 0, &save);
		int rc = validate(k, sub, val);
		k->path[save] = '\0';
		if (rc)
			return rc;
	}
	return 0;
}

static int check_array(struct check *k, const json_t *schema, json_t *v)
{
	const json_t *items = json_object_get(schema, "items");
	size_t i, save;
	json_t *e;
	if (!items)
		return 0;
	json_array_foreach(v, i, e) {
		push(k, NULL, i, &save);
		int rc = validate(k, items, e);
		k->path[save] = '\0';
		if (rc)
			return rc;
	}
	return 0;
}

static int check_enum(struct check *k, const json_t *en, json_t *v)
{
	size_t i;
	json_t *e;
	json_array_foreach(en, i, e)
		if (json_equal(e, v))
			return 0;
	char *s = json_dumps(v, JSON_ENCODE_ANY);
	int rc = fail(k, "value %s is not one of the schema's enum", s ? s : "?");
	free(s);
	return rc;
}

static int validate(struct check *k, const json_t *schema, json_t *v)
{
	schema = deref(k, schema);
	if (!schema)
		return fail(k, "the schema has a $ref to nothing");
	const json_t *t = json_object_get(schema, "type");
	if (t && !type_ok(t, v))
		return fail(k, "is %s, the schema wants another type", type_of(v));
	const json_t *en = json_object_get(schema, "enum");
	if (en && check_enum(k, en, v))
		return -1;
	const json_t *min = json_object_get(schema, "minimum");
	if (min && json_is_number(v) && json_number_value(v) < json_number_value(min))
		return fail(k, "is below the schema's minimum");
	if (json_is_object(v))
		return check_object(k, schema, v);
	if (json_is_array(v))
		return check_array(k, schema, v);
	return 0;
}

int cli_schema_check(json_t *doc, const char *dir, char *err, size_t errn)
{
	const char *cmd = json_string_value(json_object_get(doc, "command"));
	char path[4096], name[64];
	/* a failed run's document has the error's own schema */
	bool error_doc = json_object_get(doc, "error") && json_object_size(doc) == 2;
	snprintf(name, sizeof name, "%s", error_doc ? "error" : cmd ? cmd : "");
	for (char *p = name; *p; p++)
		if (*p == ' ')
			*p = '_';
	if (!*name) {
		snprintf(err, errn, "the document has no \"command\" key");
		return -1;
	}
	snprintf(path, sizeof path, "%s/%s.schema.json", dir, name);
	json_error_t je;
	json_t *schema = json_load_file(path, 0, &je);
	if (!schema) {
		snprintf(err, errn, "%s: %s (line %d)", path, je.text, je.line);
		return -1;
	}
	struct check k = {.root = schema, .err = err, .errn = errn};
	int rc = validate(&k, schema, doc);
	json_decref(schema);
	return rc;
}
