/* SPDX-License-Identifier: MIT */
/* tsearch: glibc's tsearch/tfind/tdelete under a pthread_rwlock_t, what a
 * C programmer reaches for first.  glibc allocates one node per element. */
#include <pthread.h>
#include <search.h>
#include <stdlib.h>

#include "../bench.h"

struct tsearch_peer {
	void *root;
	pthread_rwlock_t lock;
	long *pool; /* slot i holds its key; the tree stores &pool[i] */
};

static int tsearch_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static void *tsearch_create(size_t capacity)
{
	struct tsearch_peer *p = bench_alloc_pooled(sizeof(*p), offsetof(struct tsearch_peer, pool),
	                                            capacity, sizeof(*p->pool));

	if (!p)
		return NULL;
	pthread_rwlock_init(&p->lock, NULL);
	return p;
}

static void tsearch_no_free(void *node)
{
	(void)node; /* the keys live in the pool */
}

static void tsearch_destroy(void *peer)
{
	struct tsearch_peer *p = peer;

	tdestroy(p->root, tsearch_no_free);
	pthread_rwlock_destroy(&p->lock);
	free(p->pool);
	free(p);
}

static void tsearch_insert(void *peer, size_t slot, long key)
{
	struct tsearch_peer *p = peer;

	pthread_rwlock_wrlock(&p->lock);
	p->pool[slot] = key; /* not in the tree: no reader can see it */
	if (!tsearch(&p->pool[slot], &p->root, tsearch_cmp))
		abort(); /* out of memory: the measurement would be meaningless */
	pthread_rwlock_unlock(&p->lock);
}

static void tsearch_erase(void *peer, size_t slot)
{
	struct tsearch_peer *p = peer;

	pthread_rwlock_wrlock(&p->lock);
	tdelete(&p->pool[slot], &p->root, tsearch_cmp);
	pthread_rwlock_unlock(&p->lock);
}

static inline void *tsearch_find(struct tsearch_peer *p, long key)
{
	void *found;

	pthread_rwlock_rdlock(&p->lock);
	found = tfind(&key, &p->root, tsearch_cmp);
	pthread_rwlock_unlock(&p->lock);
	return found;
}

BENCH_FIND_MANY(tsearch_find_many, struct tsearch_peer, tsearch_find(p, key))

const struct bench_peer bench_peer_tsearch = {
	.name = "tsearch",
	.flags = BENCH_SHARED,
	.create = tsearch_create,
	.destroy = tsearch_destroy,
	.insert = tsearch_insert,
	.erase = tsearch_erase,
	.find_many = tsearch_find_many,
};
