/* pool.c - a tiny parallel for-loop on pthreads. */
#include "pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "offwheel/error.h"

#define MAX_THREADS 64

struct pool {
	ow_pool_fn fn;
	void *ud;
	size_t n, next, failed;
	pthread_mutex_t mu;
	bool keep;                 /* ow_parallel_run: keep the first error */
	size_t first_at;           /* its index, SIZE_MAX none */
	struct ow_err_saved first; /* its code and detail */
};

static void note_failure(struct pool *p, size_t i, int rc)
{
	pthread_mutex_lock(&p->mu);
	p->failed++;
	if (p->keep && rc < 0 && i < p->first_at) {
		ow_err_saved_dispose(&p->first);
		ow_err_save(&p->first, rc);
		p->first_at = i;
	}
	pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		size_t i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		int rc = p->fn(p->ud, i);
		if (rc)
			note_failure(p, i, rc);
	}
}

static void run(struct pool *p, int jobs)
{
	pthread_t tid[MAX_THREADS];
	size_t nt = jobs < 1 ? 1 : jobs > MAX_THREADS ? MAX_THREADS : (size_t)jobs;
	if (nt > p->n)
		nt = p->n ? p->n : 1;
	pthread_mutex_init(&p->mu, NULL);
	size_t started = 0;
	for (; started < nt; started++)
		if (pthread_create(&tid[started], NULL, worker, p) != 0)
			break;
	if (started == 0)
		worker(p);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p->mu);
}

size_t ow_parallel_for(size_t n, int jobs, ow_pool_fn fn, void *ud)
{
	struct pool p = {.fn = fn, .ud = ud, .n = n, .first_at = SIZE_MAX};
	run(&p, jobs);
	return p.failed;
}

int ow_parallel_run(size_t n, int jobs, ow_pool_fn fn, void *ud)
{
	struct pool p = {.fn = fn, .ud = ud, .n = n, .keep = true, .first_at = SIZE_MAX};
	run(&p, jobs);
	return ow_err_restore(&p.first);
}
