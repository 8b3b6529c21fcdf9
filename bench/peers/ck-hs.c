/* SPDX-License-Identifier: MIT */
/*
 * ck-hs: Concurrency Kit's hash set in single-writer/many-reader mode,
 * exact-key lookups only.  It stores pointers to the pool's keys and is
 * sized for twice the pool, so it never grows during a run.
 */
#include <ck_hs.h>
#include <stdlib.h>

#include "../bench.h"

struct ck_peer {
	struct ck_hs hs;
	long *pool; /* slot i holds its key; the set stores &pool[i] */
};

static void *ck_malloc_fn(size_t size)
{
	return malloc(size);
}

/*
 * A map is freed with @defer set only when it is replaced by a grown one
 * while readers may still use it; this peer never grows its set, so a
 * deferred free would be a bug in the sizing: keep the memory instead.
 */
static void ck_free_fn(void *ptr, size_t size, bool defer)
{
	(void)size;
	if (!defer)
		free(ptr);
}

static struct ck_malloc ck_allocator = { .malloc = ck_malloc_fn, .free = ck_free_fn };

static unsigned long ck_hash_cb(const void *object, unsigned long seed)
{
	return bench_hash(*(const long *)object) ^ seed;
}

static bool ck_compare_cb(const void *a, const void *b)
{
	return *(const long *)a == *(const long *)b;
}

static void *ck_create(size_t capacity)
{
	struct ck_peer *p = bench_alloc_pooled(sizeof(*p), offsetof(struct ck_peer, pool), capacity,
	                                       sizeof(*p->pool));

	if (!p)
		return NULL;
	if (!ck_hs_init(&p->hs, CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT, ck_hash_cb, ck_compare_cb,
	                &ck_allocator, 2 * capacity + 8, 0)) {
		free(p->pool);
		free(p);
		return NULL;
	}
	return p;
}

static void ck_destroy(void *peer)
{
	struct ck_peer *p = peer;

	ck_hs_destroy(&p->hs);
	free(p->pool);
	free(p);
}

static void ck_insert(void *peer, size_t slot, long key)
{
	struct ck_peer *p = peer;

	/* A slot keeps its key for the whole run: written before first use only. */
	if (p->pool[slot] != key)
		p->pool[slot] = key;
	if (!ck_hs_put(&p->hs, CK_HS_HASH(&p->hs, ck_hash_cb, &key), &p->pool[slot]))
		abort(); /* duplicate or out of memory: the run would be meaningless */
}

static void ck_erase(void *peer, size_t slot)
{
	struct ck_peer *p = peer;

	ck_hs_remove(&p->hs, CK_HS_HASH(&p->hs, ck_hash_cb, &p->pool[slot]), &p->pool[slot]);
}

BENCH_FIND_MANY(ck_find_many, struct ck_peer,
                ck_hs_get(&p->hs, CK_HS_HASH(&p->hs, ck_hash_cb, &key), &key))

const struct bench_peer bench_peer_ck_hs = {
	.name = "ck-hs",
	.flags = BENCH_SHARED | BENCH_HASH | BENCH_ANSWER_KEY,
	.create = ck_create,
	.destroy = ck_destroy,
	.insert = ck_insert,
	.erase = ck_erase,
	.find_many = ck_find_many,
};
