/* SPDX-License-Identifier: MIT */
/*
 * Type-stable node pools of the latched B+-trees (see btree.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "btree.h"

static void *default_alloc(size_t align, size_t size)
{
	return aligned_alloc(align, size);
}

void *(*latch_btree_alloc_)(size_t align, size_t size) = default_alloc;

/* A chunk: LATCH_BTREE_CHUNK nodes, then the link to the previous chunk. */
struct chunk {
	struct latch_btree_node nodes[LATCH_BTREE_CHUNK];
	void *prev;
};

int latch_btree_pool_reserve(struct latch_btree_pool *p, size_t want)
{
	while (p->free < want) {
		struct chunk *c = latch_btree_alloc_(_Alignof(struct chunk), sizeof(struct chunk));

		if (!c)
			return -ENOMEM;
		/*
		 * Relaxed stores: a reader reaches these nodes only through a
		 * reference stored later with release, after which it sees
		 * them initialised; before that no reader can know them.
		 */
		for (unsigned i = 0; i < LATCH_BTREE_CHUNK; i++) {
			for (unsigned j = 0; j < LATCH_BTREE_FANOUT; j++) {
				LATCH_STORE_RELAXED(&c->nodes[i].key[j], (uint64_t)0);
				LATCH_STORE_RELAXED(&c->nodes[i].slot[j], (uintptr_t)0);
			}
			latch_btree_pool_give(p, &c->nodes[i]);
		}
		c->prev = p->chunks;
		p->chunks = c;
		p->total += LATCH_BTREE_CHUNK;
	}
	return 0;
}

struct latch_btree_node *latch_btree_pool_take(struct latch_btree_pool *p)
{
	struct latch_btree_node *n = p->free_list;

	p->free_list = (void *)n->slot[0];
	p->free--;
	return n;
}

void latch_btree_pool_give(struct latch_btree_pool *p, struct latch_btree_node *n)
{
	/*
	 * Relaxed: only the writer follows the free list; a stale reader that
	 * loads this link finds a node of the same kind (or 0, which ends its
	 * attempt), and fails its retry check anyway.
	 */
	LATCH_STORE_RELAXED(&n->slot[0], (uintptr_t)p->free_list);
	p->free_list = n;
	p->free++;
}

void latch_btree_pool_free(struct latch_btree_pool *p)
{
	while (p->chunks) {
		struct chunk *c = p->chunks;

		p->chunks = c->prev;
		free(c);
	}
	p->free_list = NULL;
	p->total = p->free = 0;
}
