/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree's node pools, and the set-up of a tree.
 *
 * Node reuse: a node may be reused as soon as no reader that will pass
 * its retry check can reach it.  A copy is changed only while the counter
 * sends readers to the other copy, so readers inside the changed copy all
 * fail their retry check; readers sent to a copy after the flip see only
 * nodes reachable from its new root.  A node freed while its copy is
 * being changed is unreachable from that copy's new state, and the other
 * copy never referenced it; so it may go back to the pool at once and be
 * reused by either copy, in this update or a later one.  Pools never
 * return memory to the system before latch_btree_destroy(), and never
 * hand a node of one kind out as the other (docs/design.md, section 7).
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise() */
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <latch/map.h>
#include <latch/range.h>

#include "btree.h"

/* The public structs are opaque storage for the core: same size, same alignment. */
_Static_assert(sizeof(struct latch_map) == sizeof(struct latch_btree),
               "struct latch_map must be exactly the core's storage");
_Static_assert(_Alignof(struct latch_map) == _Alignof(struct latch_btree),
               "struct latch_map must be aligned as the core");
_Static_assert(sizeof(((struct latch_range_map *)0)->core_) == sizeof(struct latch_btree),
               "a range map's core_ must be exactly the core's storage");
_Static_assert(sizeof(((struct latch_range_map *)0)->payload_) == sizeof(struct latch_btree_pool) &&
                   _Alignof(struct latch_btree_pool) <= _Alignof(uintptr_t),
               "a range map's payload_ must be exactly a pool's storage");
_Static_assert(offsetof(struct latch_range_map, core_) == 0 &&
                   _Alignof(struct latch_range_map) >= _Alignof(struct latch_btree),
               "a range map starts with its core, aligned as the core");

#ifdef LATCH_TEST_HOOKS
static void *default_alloc(size_t align, size_t size)
{
	return aligned_alloc(align, size);
}

void *(*latch_btree_alloc_hook_)(size_t align, size_t size) = default_alloc;
bool latch_btree_huge_pages_hook_ = true;
#define HUGE_PAGES latch_btree_huge_pages_hook_
#else
#define HUGE_PAGES true
#endif

void *latch_btree_alloc(size_t align, size_t size)
{
#ifdef LATCH_TEST_HOOKS
	return latch_btree_alloc_hook_(align, size);
#else
	return aligned_alloc(align, size);
#endif
}

/* A chunk: LATCH_BTREE_CHUNK nodes of the pool's size, then the link to the previous chunk. */
static void **chunk_link(const struct latch_btree_pool *p, void *chunk)
{
	return (void **)((char *)chunk + LATCH_BTREE_CHUNK * p->node_size);
}

static struct latch_btree_node *chunk_node(const struct latch_btree_pool *p, void *chunk,
                                           unsigned i)
{
	return (struct latch_btree_node *)((char *)chunk + i * p->node_size);
}

/* Bytes of a chunk of @p, rounded to a node's alignment. */
static size_t chunk_bytes(const struct latch_btree_pool *p)
{
	const size_t align = _Alignof(struct latch_btree_node);

	return (LATCH_BTREE_CHUNK * p->node_size + sizeof(void *) + align - 1) / align * align;
}

/* ---- the chunk hook of published maps (src/publish.c) ---- */

int (*latch_btree_chunk_hook_)(const struct latch_btree_pool *p, void *chunk, size_t bytes);

/* Does the hook, if one is set, refuse the new chunk @c of @bytes? */
static bool chunk_refused(const struct latch_btree_pool *p, void *c, size_t bytes)
{
	/* Relaxed: set once, by a call that must not run beside this writer. */
	int (*hook)(const struct latch_btree_pool *, void *, size_t) =
	    LATCH_LOAD_RELAXED(&latch_btree_chunk_hook_);

	return hook && hook(p, c, bytes) != 0;
}

void latch_btree_pool_chunks_(const struct latch_btree_pool *p,
                              void (*fn)(void *chunk, size_t bytes, void *ctx), void *ctx)
{
	for (void *c = p->chunks; c; c = *chunk_link(p, c))
		fn(c, chunk_bytes(p), ctx);
}

/*
 * Memory for one chunk of @p, carved from its newest region or from a new
 * one: a region of one chunk while the pool is small, a huge-page region
 * once it holds LATCH_BTREE_HUGE_REGION bytes (so a small map never
 * reserves 2 MB, and a large one wastes at most one region's tail per
 * pool).  NULL when the allocator fails or the chunk hook refuses.
 */
static void *chunk_alloc(struct latch_btree_pool *p)
{
	/* A region starts with its link, padded to a node's alignment. */
	const size_t head = _Alignof(struct latch_btree_node);
	size_t need = chunk_bytes(p);
	void *c;

	if (p->spare_bytes < need) {
		bool huge = HUGE_PAGES && p->total * p->node_size >= LATCH_BTREE_HUGE_REGION;
		size_t size = huge ? LATCH_BTREE_HUGE_REGION : head + need;
		void **r = latch_btree_alloc(huge ? LATCH_BTREE_HUGE_REGION : head, size);

		if (!r)
			return NULL;
#ifdef MADV_HUGEPAGE
		/* A hint: where the kernel grants no huge page, 4 KB pages serve. */
		if (huge)
			(void)madvise(r, size, MADV_HUGEPAGE);
#endif
		*r = p->regions;
		p->regions = r;
		p->spare = (char *)r + head;
		p->spare_bytes = size - head;
	}
	c = p->spare;
	if (chunk_refused(p, c, need))
		return NULL; /* the bytes stay the region's spare */
	p->spare += need;
	p->spare_bytes -= need;
	return c;
}

int latch_btree_pool_reserve(struct latch_btree_pool *p, size_t want)
{
	while (p->free < want) {
		void *c = chunk_alloc(p);

		if (!c)
			return -ENOMEM;
		/*
		 * Relaxed stores: a reader reaches these nodes only through a
		 * reference stored later with release, after which it sees
		 * them initialised; before that no reader can know them.
		 */
		for (unsigned i = 0; i < LATCH_BTREE_CHUNK; i++) {
			uint64_t *w = (uint64_t *)chunk_node(p, c, i);

			for (size_t j = 0; j < p->node_size / sizeof(*w); j++)
				LATCH_STORE_RELAXED(&w[j], (uint64_t)0);
			latch_btree_pool_give(p, chunk_node(p, c, i));
		}
		*chunk_link(p, c) = p->chunks;
		p->chunks = c;
		p->total += LATCH_BTREE_CHUNK;
	}
	return 0;
}

/*
 * Where a free node keeps the link to the next: a node in slot[0], where a
 * stale reader that follows it finds a node of the same kind (or 0); a
 * payload slot smaller than a node (range.c), which readers copy but never
 * follow, in its first word.  Either way inside the node.
 */
static uintptr_t *free_link(const struct latch_btree_pool *p, void *n)
{
	return p->node_size < sizeof(struct latch_btree_node)
	           ? (uintptr_t *)n
	           : &((struct latch_btree_node *)n)->slot[0];
}

void *latch_btree_pool_next(const struct latch_btree_pool *p, void *n)
{
	return (void *)*free_link(p, n);
}

struct latch_btree_node *latch_btree_pool_take(struct latch_btree_pool *p)
{
	struct latch_btree_node *n = p->free_list;

	p->free_list = (void *)*free_link(p, n);
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
	LATCH_STORE_RELAXED(free_link(p, n), (uintptr_t)p->free_list);
	p->free_list = n;
	p->free++;
}

/* Put every node of @p's chunks for which @used(@ctx, node) is false on the free list. */
void latch_btree_pool_refill(struct latch_btree_pool *p,
                             bool (*used)(const void *ctx, const struct latch_btree_node *n),
                             const void *ctx)
{
	p->free_list = NULL;
	p->free = p->total = 0;
	for (void *c = p->chunks; c; c = *chunk_link(p, c)) {
		p->total += LATCH_BTREE_CHUNK;
		for (unsigned i = 0; i < LATCH_BTREE_CHUNK; i++)
			if (!used(ctx, chunk_node(p, c, i)))
				latch_btree_pool_give(p, chunk_node(p, c, i));
	}
}

void latch_btree_pool_free(struct latch_btree_pool *p)
{
	while (p->regions) {
		void **r = p->regions;

		p->regions = *r;
		free(r);
	}
}

/*
 * The bound is concave in the nodes in use, so reserving for the average
 * of the two copies covers both: the copies may differ in shape (a failed
 * batch is undone on one copy only).
 */
size_t latch_btree_in_use(const struct latch_btree *t, unsigned kind)
{
	return (t->pool[kind].total - t->pool[kind].free) / 2;
}

int latch_btree_reserve_more(struct latch_btree *t, size_t leaves, size_t inner)
{
	if (latch_btree_pool_reserve(&t->pool[LATCH_BTREE_LEAF_POOL], 2 * leaves) ||
	    latch_btree_pool_reserve(&t->pool[LATCH_BTREE_INNER_POOL], 2 * inner))
		return -ENOMEM;
	return 0;
}

void latch_btree_init(struct latch_btree *t, bool spans)
{
	memset(t, 0, sizeof(*t));
	latch_seq_init(&t->seq);
	t->spans = spans;
	t->pool[LATCH_BTREE_INNER_POOL].node_size = sizeof(struct latch_btree_node);
	t->pool[LATCH_BTREE_LEAF_POOL].node_size =
	    spans ? sizeof(struct latch_btree_span_leaf) : sizeof(struct latch_btree_node);
}

void latch_btree_destroy(struct latch_btree *t)
{
	latch_btree_pool_free(&t->pool[LATCH_BTREE_INNER_POOL]);
	latch_btree_pool_free(&t->pool[LATCH_BTREE_LEAF_POOL]);
	memset(t, 0, sizeof(*t));
}
