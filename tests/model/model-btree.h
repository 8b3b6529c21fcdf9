/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree core under GenMC, for harnesses (e) and (f): the
 * real src/btree-*.c compiled into the harness (GenMC explores one
 * translation unit), with the scalar (relaxed atomic) in-node count, node
 * pools stocked from static nodes, and the capacity check below.
 *
 * Node capacity.  A reader inside a node that the writer is rewriting
 * loads every key of it with an independent relaxed load, each of which
 * may read the old or the new key: 2^16 executions per node and lookup at
 * the real capacity of 16 (one split under one lookup, without node
 * reuse, took 262147 executions and 8.5 minutes).  run.sh compiles these
 * harnesses with -DLATCH_BTREE_FANOUT=4u, the core's compile-time
 * override (LATCH_BTREE_MIN follows as half of it), so no source line
 * changes, and every loop and bound of the core is written in terms of
 * them; the SIMD counts exist for 16 keys only.  The harnesses refuse to
 * compile without the override.
 *
 * Shims, none of which runs concurrently with a reader or orders anything:
 * the pools are stocked from static nodes (zero, as a new chunk is after
 * latch_btree_pool_reserve() zeroes it, and published to both threads by
 * their creation) with the real latch_btree_pool_give(), so no update
 * allocates a chunk (64 nodes of zeroing stores per chunk would make every
 * execution slow; the allocation hook asserts that none is asked for);
 * memcpy() and memset() (GenMC takes memcpy() only with a length known at
 * compile time, and rejects the core's memset() of a whole struct; run.sh
 * compiles these harnesses with -fno-builtin-memcpy -fno-builtin-memset)
 * copy the writer's private entry arrays word by word and clear a struct
 * latch_btree field by field; qsort() and bsearch() (used only by the
 * recovery after fork(), which GenMC's C library lacks) are an insertion
 * sort and a linear search.  LATCH_BTREE_NO_SIMD
 * selects the scalar count, as in a ThreadSanitizer build: the SIMD
 * counts' plain vector loads are outside C11 (design.md 7.7), and the
 * relaxed-atomic count is its reference.
 */
#ifndef LATCH_MODEL_BTREE_H
#define LATCH_MODEL_BTREE_H

#include "model.h"

#include <stdlib.h>
#include <string.h>

static void model_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;

	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0; j--)
			for (size_t k = 0; k < size; k++) {
				char t = b[(j - 1) * size + k];

				b[(j - 1) * size + k] = b[j * size + k];
				b[j * size + k] = t;
			}
}

#define qsort model_qsort

static void *model_bsearch(const void *key, const void *base, size_t n, size_t size,
                           int (*cmp)(const void *, const void *))
{
	for (size_t i = 0; i < n; i++)
		if (!cmp(key, (const char *)base + i * size))
			return (void *)((const char *)base + i * size);
	return NULL;
}

#define bsearch model_bsearch

void *memcpy(void *dst, const void *src, size_t n)
{
	assert(n % sizeof(uint64_t) == 0); /* arrays of struct latch_btree_ent only */
	for (size_t i = 0; i < n / sizeof(uint64_t); i++)
		((uint64_t *)dst)[i] = ((const uint64_t *)src)[i];
	return dst;
}

#define LATCH_BTREE_NO_SIMD 1
/* The allocation hook below (the library the tests link has it too). */
#define LATCH_TEST_HOOKS    1

#include <src/btree.h>

/* GenMC's <errno.h> lacks ENOTSUP, which Linux defines as EOPNOTSUPP. */
#ifndef ENOTSUP
#define ENOTSUP EOPNOTSUPP
#endif

/* Clear the fields of pool @p. */
static void model_clear_pool(struct latch_btree_pool *p)
{
	p->free_list = NULL;
	p->chunks = NULL;
	p->total = 0;
	p->free = 0;
	p->node_size = 0;
	p->regions = NULL;
	p->spare = NULL;
	p->spare_bytes = 0;
}

void *memset(void *dst, int c, size_t n)
{
	struct latch_btree *m = dst;

	assert(c == 0);
	/* The range map's init and destroy clear its pool of payload slots (src/range.c). */
	if (n == sizeof(struct latch_btree_pool)) {
		model_clear_pool(dst);
		return dst;
	}
	/* Otherwise only latch_btree_init() and latch_btree_destroy() call it, on a whole tree. */
	assert(n == sizeof(*m));
	m->seq.sequence = 0;
	for (int i = 0; i < 2; i++) {
		m->copy[i].root = 0;
		m->copy[i].size = 0;
		m->copy[i].height = 0;
		model_clear_pool(&m->pool[i]);
	}
	m->spans = false;
	return dst;
}

#include <src/btree-pool.c>
#include <src/btree-descend.c>
#include <src/btree-write.c>
#include <src/btree-commit.c>
#include <src/btree-load.c>

_Static_assert(LATCH_BTREE_FANOUT == 4 && LATCH_BTREE_MIN == 2,
               "the B+-tree harnesses run with -DLATCH_BTREE_FANOUT=4u (run.sh, model-btree.h)");

/* Nodes each pool is stocked with: more than the updates here can take. */
#define MODEL_STOCK 12

static struct latch_btree_node model_inner_stock[MODEL_STOCK];
/* Leaves of either kind: a span leaf is a node followed by its ends. */
static struct latch_btree_span_leaf model_leaf_stock[MODEL_STOCK];

/* The allocation hook: scratch arrays only, never a chunk of nodes. */
static void *model_alloc(size_t align, size_t size)
{
	assert(size < LATCH_BTREE_CHUNK * sizeof(struct latch_btree_node));
	return aligned_alloc(align, size);
}

/* Stock the pools of the initialised, empty tree @t from the static nodes. */
static void model_stock_pools(struct latch_btree *t)
{
	for (int i = 0; i < MODEL_STOCK; i++) {
		latch_btree_pool_give(&t->pool[LATCH_BTREE_INNER_POOL], &model_inner_stock[i]);
		latch_btree_pool_give(&t->pool[LATCH_BTREE_LEAF_POOL], &model_leaf_stock[i].node);
	}
	t->pool[LATCH_BTREE_INNER_POOL].total += MODEL_STOCK;
	t->pool[LATCH_BTREE_LEAF_POOL].total += MODEL_STOCK;
	latch_btree_alloc_hook_ = model_alloc;
}

#endif /* LATCH_MODEL_BTREE_H */
