/* error.c - the error table and the per-thread detail message. */
#include "offwheel/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OW_DETAIL_MAX 2048
static _Thread_local char detail[OW_DETAIL_MAX];

struct err_row {
	int code;
	int exitc;
	const char *name;
	const char *text;
};

static const struct err_row rows[] = {
#define OW_X_ROW(n, e, t) {OW_##n, e, #n, t},
	OW_ERROR_TABLE(OW_X_ROW)
#undef OW_X_ROW
};

static const struct err_row *find_row(int code)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i].code == code)
			return &rows[i];
	return NULL;
}

int ow_err(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	return code;
}

int ow_err_prefix(int code, const char *fmt, ...)
{
	char old[OW_DETAIL_MAX];
	char pre[OW_DETAIL_MAX];
	va_list ap;
	memcpy(old, detail, sizeof old);
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	size_t n = strnlen(pre, sizeof pre - 1);
	memcpy(detail, pre, n);
	size_t m = strnlen(old, sizeof detail - 1 - n);
	memcpy(detail + n, old, m);
	detail[n + m] = '\0';
	return code;
}

const char *ow_err_detail(void) { return detail; }

void ow_err_save(struct ow_err_saved *s, int code)
{
	s->code = code;
	s->detail = strdup(detail);
}

int ow_err_restore(struct ow_err_saved *s)
{
	int code = s->code;
	if (!code)
		return 0;
	if (!s->detail)
		code = ow_err(OW_ENOMEM, "out of memory");
	else
		ow_err(code, "%s", s->detail);
	ow_err_saved_dispose(s);
	return code;
}

void ow_err_saved_dispose(struct ow_err_saved *s)
{
	free(s->detail);
	s->detail = NULL;
	s->code = 0;
}

void ow_err_clear(void) { detail[0] = '\0'; }

const char *ow_err_name(int code)
{
	const struct err_row *r = find_row(code);
	if (code == OW_OK)
		return "OK";
	return r ? r->name : "UNKNOWN";
}

const char *ow_err_text(int code)
{
	const struct err_row *r = find_row(code);
	if (code == OW_OK)
		return "ok";
	return r ? r->text : "unknown error";
}

int ow_err_exit_code(int code)
{
	const struct err_row *r = find_row(code);
	if (code == OW_OK)
		return 0;
	return r ? r->exitc : 1;
}
