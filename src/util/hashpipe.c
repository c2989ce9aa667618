/* hashpipe.c - one worker thread writing and hashing queued blocks. */
#include "hashpipe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offwheel/error.h"
#include "fsutil.h"

#define BLOCK ((size_t)1 << 20)

struct block {
	struct block *next;
	struct ow_hashpipe_stream *s;
	size_t len;
	char *data;
};

struct ow_hashpipe {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t changed;
	struct block *head, *tail;
	unsigned queued, max_blocks;
	int busy; /* the worker holds a block */
	int stop;
};

static void process(struct block *b)
{
	struct ow_hashpipe_stream *s = b->s;
	if (atomic_load_explicit(&s->err, memory_order_relaxed)) /* the worker's own store */
		return;
	int rc = ow_write_all(s->fd, b->data, b->len);
	if (!rc)
		rc = ow_sha256_update(s->h, b->data, b->len);
	if (rc) {
		s->detail = ow_err_detail_dup(); /* the worker's own detail, for the writer */
		atomic_store_explicit(&s->err, rc, memory_order_release);
	}
}

static void *worker(void *arg)
{
	ow_hashpipe *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->changed, &p->mu);
		if (!p->head)
			break;
		struct block *b = p->head;
		p->head = b->next;
		if (!p->head)
			p->tail = NULL;
		p->busy = 1;
		pthread_mutex_unlock(&p->mu);
		process(b);
		free(b->data);
		free(b);
		pthread_mutex_lock(&p->mu);
		p->busy = 0;
		p->queued--;
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int ow_hashpipe_new(ow_hashpipe **out, unsigned max_blocks)
{
	ow_hashpipe *p = calloc(1, sizeof *p);
	if (!p)
		return ow_err(OW_ENOMEM, "out of memory");
	p->max_blocks = max_blocks ? max_blocks : 1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->changed, NULL);
	if (pthread_create(&p->thread, NULL, worker, p) != 0) {
		free(p);
		return ow_err(OW_EINTERNAL, "cannot start the hashing thread");
	}
	*out = p;
	return 0;
}

static void drain_locked(ow_hashpipe *p)
{
	while (p->head || p->busy)
		pthread_cond_wait(&p->changed, &p->mu);
}

void ow_hashpipe_free(ow_hashpipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	drain_locked(p);
	p->stop = 1;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->changed);
	free(p);
}

static int stream_error(struct ow_hashpipe_stream *s)
{
	int err = atomic_load_explicit(&s->err, memory_order_acquire); /* then detail is there */
	return err ? ow_err(err, "%s", s->detail ? s->detail : "out of memory") : 0;
}

/* Hand the staged block to the worker, waiting while the queue is full. */
static int push(ow_hashpipe *p, struct ow_hashpipe_stream *s)
{
	if (!s->staged)
		return 0;
	struct block *b = malloc(sizeof *b);
	if (!b)
		return ow_err(OW_ENOMEM, "out of memory");
	*b = (struct block){.s = s, .len = s->staged, .data = s->stage};
	s->stage = NULL;
	s->staged = 0;
	pthread_mutex_lock(&p->mu);
	while (p->queued >= p->max_blocks)
		pthread_cond_wait(&p->changed, &p->mu);
	if (p->tail)
		p->tail->next = b;
	else
		p->head = b;
	p->tail = b;
	p->queued++;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int ow_hashpipe_write(ow_hashpipe *p, struct ow_hashpipe_stream *s, const void *buf, size_t len)
{
	const char *c = buf;
	int rc = stream_error(s);
	while (!rc && len) {
		if (!s->stage && !(s->stage = malloc(BLOCK)))
			return ow_err(OW_ENOMEM, "out of memory");
		size_t n = BLOCK - s->staged < len ? BLOCK - s->staged : len;
		memcpy(s->stage + s->staged, c, n);
		s->staged += n;
		c += n;
		len -= n;
		if (s->staged == BLOCK)
			rc = push(p, s);
	}
	return rc;
}

int ow_hashpipe_flush(ow_hashpipe *p, struct ow_hashpipe_stream *s)
{
	int rc = push(p, s);
	if (rc)
		return rc;
	pthread_mutex_lock(&p->mu);
	drain_locked(p);
	pthread_mutex_unlock(&p->mu);
	return stream_error(s);
}

int ow_hashpipe_reset(ow_hashpipe *p, struct ow_hashpipe_stream *s)
{
	s->staged = 0;
	pthread_mutex_lock(&p->mu);
	drain_locked(p);
	pthread_mutex_unlock(&p->mu);
	s->err = 0; /* the bytes it failed on are being discarded */
	free(s->detail);
	s->detail = NULL;
	return 0;
}

void ow_hashpipe_stream_done(struct ow_hashpipe_stream *s)
{
	free(s->stage);
	s->stage = NULL;
	s->staged = 0;
	free(s->detail);
	s->detail = NULL;
}
