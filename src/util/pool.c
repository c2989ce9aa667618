/* pool.c - a tiny parallel for-loop on pthreads. */
#include "pool.h"

#include <pthread.h>

#define MAX_THREADS 64

struct pool {
	ow_pool_fn fn;
	void *ud;
	size_t n, next, failed;
	pthread_mutex_t mu;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		size_t i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		if (p->fn(p->ud, i)) {
			pthread_mutex_lock(&p->mu);
			p->failed++;
			pthread_mutex_unlock(&p->mu);
		}
	}
}

size_t ow_parallel_for(size_t n, int jobs, ow_pool_fn fn, void *ud)
{
	struct pool p = {.fn = fn, .ud = ud, .n = n};
	pthread_t tid[MAX_THREADS];
	size_t nt = jobs < 1 ? 1 : jobs > MAX_THREADS ? MAX_THREADS : (size_t)jobs;
	if (nt > n)
		nt = n ? n : 1;
	pthread_mutex_init(&p.mu, NULL);
	size_t started = 0;
	for (; started < nt; started++)
		if (pthread_create(&tid[started], NULL, worker, &p) != 0)
			break;
	if (started == 0)
		worker(&p);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.mu);
	return p.failed;
}
