/* SPDX-License-Identifier: MIT */
/*
 * The state shared by the peers built on the project's RB-tree (plain,
 * seqlock, rwlock, mutex, latch): a pool of the tests' element type and
 * one tree root, plus whatever lock the peer adds around it.  Every such
 * peer therefore pays for the same element (a long key and a
 * struct latch_tree_node: the one-copy peers leave node[1] unused).
 */
#ifndef LATCH_BENCH_TREE_PEER_H
#define LATCH_BENCH_TREE_PEER_H

#include <pthread.h>
#include <stdlib.h>

#include "../bench.h"
#include "elem.h"
#include "seqlock-tree.h"

struct tree_peer {
	union {
		struct latch_tree_root root; /* latch; plain, rwlock, mutex use copy 0 */
		struct seqlock_tree seqlock; /* seqlock */
	};
	pthread_rwlock_t rwlock; /* rwlock peer only */
	pthread_mutex_t mutex;   /* mutex peer only */
	struct test_elem *pool;
};

static inline void *tree_peer_create(size_t capacity)
{
	struct tree_peer *p = (struct tree_peer *)bench_alloc_pooled(
	    sizeof(*p), offsetof(struct tree_peer, pool), capacity, sizeof(*p->pool));

	if (!p)
		return NULL;
	pthread_rwlock_init(&p->rwlock, NULL);
	pthread_mutex_init(&p->mutex, NULL);
	return p;
}

static inline void tree_peer_destroy(void *peer)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	pthread_rwlock_destroy(&p->rwlock);
	pthread_mutex_destroy(&p->mutex);
	free(p->pool);
	free(p);
}

/*
 * The element in @slot, given @key.  A slot keeps its key for the whole
 * run, so the key is written only once, before the element is first
 * inserted: readers never see it change.
 */
static inline struct latch_tree_node *tree_peer_node(struct tree_peer *p, size_t slot, long key)
{
	if (p->pool[slot].key != key)
		p->pool[slot].key = key;
	return &p->pool[slot].node;
}

/* Declares peer @var named @peer_name with the given flags and functions. */
#define TREE_PEER(var, peer_name, peer_flags, insert_fn, erase_fn, find_fn)                        \
	const struct bench_peer var = { .name = (peer_name),                                       \
		                        .flags = (peer_flags),                                     \
		                        .create = tree_peer_create,                                \
		                        .destroy = tree_peer_destroy,                              \
		                        .insert = (insert_fn),                                     \
		                        .erase = (erase_fn),                                       \
		                        .find_many = (find_fn) }

/*
 * Declares peer @var named @peer_name: the one-copy tree ordered by
 * @tree_ops behind the lock member @lock, taken with @wrlock by the
 * writer and @rdlock by readers, released with @unlock.
 */
#define LOCKED_TREE_PEER(var, peer_name, lock, wrlock, rdlock, unlock, tree_ops)                   \
	static void var##_insert(void *peer, size_t slot, long key)                                \
	{                                                                                          \
		struct tree_peer *p = (struct tree_peer *)peer;                                    \
		wrlock(&p->lock);                                                                  \
		one_copy_insert(&p->root, tree_peer_node(p, slot, key), (tree_ops));               \
		unlock(&p->lock);                                                                  \
	}                                                                                          \
	static void var##_erase(void *peer, size_t slot)                                           \
	{                                                                                          \
		struct tree_peer *p = (struct tree_peer *)peer;                                    \
		wrlock(&p->lock);                                                                  \
		one_copy_erase(&p->root, &p->pool[slot].node);                                     \
		unlock(&p->lock);                                                                  \
	}                                                                                          \
	static inline struct latch_tree_node *var##_find(struct tree_peer *p, long key)            \
	{                                                                                          \
		struct latch_tree_node *n;                                                         \
		rdlock(&p->lock);                                                                  \
		n = one_copy_find(&p->root, &key, (tree_ops));                                     \
		unlock(&p->lock);                                                                  \
		return n;                                                                          \
	}                                                                                          \
	BENCH_FIND_MANY(var##_find_many, struct tree_peer, var##_find(p, key))                     \
	TREE_PEER(var, peer_name, BENCH_SHARED, var##_insert, var##_erase, var##_find_many)

#endif /* LATCH_BENCH_TREE_PEER_H */
