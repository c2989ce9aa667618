/* error.c - the error table and the per-thread detail message. */
#include "offwheel/error.h"

#include <signal.h>
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

static int utf8_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

void ow_err_fit(char *dst, size_t n, const char *src)
{
	if (!n)
		return;
	size_t len = strlen(src);
	if (len < n) {
		memcpy(dst, src, len + 1);
		return;
	}
	char mark[64];
	int ml = snprintf(mark, sizeof mark, " [... %zu bytes left out ...] ", len);
	if (ml < 0 || (size_t)ml + 16 >= n) { /* no room for both ends: the start */
		size_t k = n - 1;
		while (k && utf8_cont((unsigned char)src[k]))
			k--;
		memcpy(dst, src, k);
		dst[k] = '\0';
		return;
	}
	/* two fifths of the room for the start, the rest for the end */
	size_t room = n - 1 - (size_t)ml, head = room * 2 / 5, tail = room - head;
	while (head && utf8_cont((unsigned char)src[head]))
		head--;
	size_t from = len - tail;
	while (from < len && utf8_cont((unsigned char)src[from]))
		from++;
	size_t left = len - head - (len - from);
	ml = snprintf(mark, sizeof mark, " [... %zu bytes left out ...] ", left);
	memcpy(dst, src, head);
	memcpy(dst + head, mark, (size_t)ml);
	memcpy(dst + head + (size_t)ml, src + from, len - from + 1);
}

/* A message longer than the detail keeps its start and its end. */
static void set_detail(const char *text)
{
	ow_err_fit(detail, sizeof detail, text);
}

int ow_err(int code, const char *fmt, ...)
{
	va_list ap, again;
	va_start(ap, fmt);
	va_copy(again, ap);
	int w = vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	char *full = NULL;
	if (w >= (int)sizeof detail && vasprintf(&full, fmt, again) >= 0) {
		set_detail(full);
		free(full);
	}
	va_end(again);
	return code;
}

int ow_err_prefix(int code, const char *fmt, ...)
{
	char *pre = NULL, *full = NULL;
	va_list ap;
	va_start(ap, fmt);
	int w = vasprintf(&pre, fmt, ap);
	va_end(ap);
	if (w < 0)
		return code; /* out of memory: the detail stays as it was */
	if (asprintf(&full, "%s%s", pre, detail) >= 0)
		set_detail(full);
	free(full);
	free(pre);
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

char *ow_err_detail_dup(void)
{
	size_t n = strlen(detail) + 1;
	char *copy = malloc(n);
	if (copy)
		memcpy(copy, detail, n);
	return copy;
}

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

/* The one flag of an interrupt: the signal's number. */
static volatile sig_atomic_t stop_sig;

void ow_interrupt(int sig)
{
	if (!stop_sig)
		stop_sig = sig ? sig : SIGINT;
}

int ow_interrupted(void) { return stop_sig; }

int ow_err_exit_code(int code)
{
	const struct err_row *r = find_row(code);
	if (code == OW_OK)
		return 0;
	if (code == OW_EINTERRUPTED && stop_sig)
		return 128 + stop_sig;
	return r ? r->exitc : 1;
}
