/* SPDX-License-Identifier: MIT */
/*
 * The latched B+-tree core under latch_map and latch_range_map: its
 * private type, fixed-size nodes, references that carry the kind of the
 * node they point to, type-stable node pools, the descents, the writer's
 * changes to one copy, and the one batch engine that turns changes into a
 * latch update (latch_seq_update()).  Not installed.
 *
 * A node holds LATCH_BTREE_FANOUT (16) keys and as many slots.  A node
 * with c < 16 used entries fills entries c..15 with copies of entry c-1
 * (key and slot), so a branchless count over all 16 keys finds the right
 * entry without knowing c, and every position stays inside the node.
 * Leaves hold (key, value) entries; inner nodes hold (lower bound, child)
 * entries, where every key of child i is >= key[i] and < key[i+1].  The
 * leaves of a span tree (a range map's) also hold an end per entry, in an
 * array after the node.
 *
 * References: a slot of an inner node, and a copy's root, hold a node's
 * address with bit 0 set for a leaf and clear for an inner node.  Nodes
 * come from two pools, one per kind, whose memory is only ever used for
 * that kind and is returned to the system only by latch_btree_destroy():
 * since a node's kind never changes, every reference ever stored names
 * the kind of the memory it points to, however stale the reader's view.
 *
 * Files: btree-pool.c (pools), btree-descend.c (every descent, readers'
 * and writer's, with the in-node count chosen once), btree-write.c (the
 * changes to one copy and their rebalancing), btree-commit.c (the batch
 * engine), btree-load.c (bulk load, recovery after fork()), btree-check.c
 * (the invariant checker).
 */
#ifndef LATCH_SRC_BTREE_H
#define LATCH_SRC_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <latch/atomic.h>
#include <latch/seq.h>

/*
 * Entries per node.  The model checks (tests/model) build the core with
 * -DLATCH_BTREE_FANOUT=4u; the SIMD counts exist for 16 only.
 */
#ifndef LATCH_BTREE_FANOUT
#define LATCH_BTREE_FANOUT 16u
#endif
/* Fewest entries of a node other than the root (half of a node). */
#define LATCH_BTREE_MIN       (LATCH_BTREE_FANOUT / 2u)
/* Longest descent a reader follows before it abandons its attempt. */
#define LATCH_BTREE_MAX_DEPTH 32u
/* Nodes per chunk a pool allocates at once. */
#define LATCH_BTREE_CHUNK     64u

/* Bit 0 of a reference: the node is a leaf. */
#define LATCH_BTREE_LEAF ((uintptr_t)1)

/* The two kinds of node, and the index of their pools. */
enum { LATCH_BTREE_INNER_POOL = 0, LATCH_BTREE_LEAF_POOL = 1 };

/* 256 bytes on 64-bit targets (four cache lines), 192 on 32-bit ones. */
struct latch_btree_node {
	uint64_t key[LATCH_BTREE_FANOUT];
	uintptr_t slot[LATCH_BTREE_FANOUT]; /* leaf: value; inner: child reference */
} __attribute__((aligned(64)));

/*
 * A leaf of a span tree: the node, then the end of each entry, padded
 * like the keys and slots.  384 bytes on 64-bit targets, 256 on 32-bit.
 */
struct latch_btree_span_leaf {
	struct latch_btree_node node;
	uintptr_t end[LATCH_BTREE_FANOUT];
} __attribute__((aligned(64)));

/*
 * A type-stable pool of nodes of one kind.  Nodes come in chunks of
 * LATCH_BTREE_CHUNK, carved from regions the pool allocates: one chunk
 * each at first, then, once the pool holds LATCH_BTREE_HUGE_REGION bytes,
 * regions of that size and alignment, which the kernel is asked to back
 * with huge pages (fewer TLB misses for lookups in large maps).
 */
struct latch_btree_pool {
	void *free_list;    /* a node; the next free node is in its slot[0] */
	void *chunks;       /* the newest chunk; each chunk links to the previous one */
	size_t total;       /* nodes in all chunks */
	size_t free;        /* nodes on the free list */
	size_t node_size;   /* bytes per node */
	void *regions;      /* the newest region; each links (first word) to the previous one */
	char *spare;        /* the newest region's bytes not yet carved into chunks */
	size_t spare_bytes; /* how many */
};

/* The size and alignment of a huge-page region (2 MB: x86-64's and arm64's huge page). */
#define LATCH_BTREE_HUGE_REGION ((size_t)2 << 20)

/*
 * The core: one latch counter and two full trees (copy 0 and copy 1)
 * sharing no node.  The public struct latch_map, and the storage inside
 * struct latch_range_map, are opaque words of its size and alignment
 * (checked in btree-pool.c); latch_btree_of_map() and
 * latch_btree_of_range() below are the only casts.
 */
struct latch_btree {
	struct latch_seq seq;
	/* Per copy: root reference (0: empty), entries, levels. */
	struct {
		uintptr_t root;
		size_t size;
		size_t height;
	} copy[2];
	struct latch_btree_pool pool[2]; /* [LATCH_BTREE_INNER_POOL], [LATCH_BTREE_LEAF_POOL] */
	bool spans;                      /* leaves hold an end per entry (a range map's) */
};

struct latch_map;
struct latch_range_map;

/* The core inside a map, and inside a range map (range.c: its storage is the first member). */
static inline struct latch_btree *latch_btree_of_map(const struct latch_map *m)
{
	return (struct latch_btree *)(uintptr_t)m;
}

static inline struct latch_btree *latch_btree_of_range(const struct latch_range_map *m)
{
	return (struct latch_btree *)(uintptr_t)m;
}

/* An entry as the writer moves it and readers copy it out. */
struct latch_btree_ent {
	uint64_t key;
	uintptr_t slot; /* leaf: value; inner: child reference */
	uintptr_t end;  /* leaves of a span tree only */
};

/* The node a reference points to (NULL for 0). */
static inline struct latch_btree_node *latch_btree_node_(uintptr_t ref)
{
	return (struct latch_btree_node *)(ref & ~LATCH_BTREE_LEAF);
}

/* The reference to @n, of the kind given by @leaf. */
static inline uintptr_t latch_btree_ref_(const struct latch_btree_node *n, bool leaf)
{
	return (uintptr_t)n | (leaf ? LATCH_BTREE_LEAF : 0);
}

/* The ends of a span leaf. */
static inline uintptr_t *latch_btree_ends_(const struct latch_btree_node *n)
{
	return ((struct latch_btree_span_leaf *)(uintptr_t)n)->end;
}

/* ---- set-up (btree-pool.c) ---- */

/* Make @t an empty tree; @spans: its leaves hold an end per entry.  O(1).  Before sharing. */
void latch_btree_init(struct latch_btree *t, bool spans);

/* Release every node of @t; no reader may be left. */
void latch_btree_destroy(struct latch_btree *t);

/* ---- pools (btree-pool.c) ---- */

/*
 * The allocator of every chunk and scratch array: aligned_alloc(), or in
 * the library the tests link (built with LATCH_TEST_HOOKS) whatever
 * latch_btree_alloc_hook_ points to, so that tests can make it fail.
 * Memory it returns is released with free().
 */
void *latch_btree_alloc(size_t align, size_t size);
#ifdef LATCH_TEST_HOOKS
extern void *(*latch_btree_alloc_hook_)(size_t align, size_t size);
/* false: pools never take huge-page regions (latchbench measures both). */
extern bool latch_btree_huge_pages_hook_;
#endif

/*
 * Make sure @p has at least @want free nodes, allocating chunks as needed.
 * Returns 0 or -ENOMEM (chunks allocated before the failure stay in the
 * pool).  Writer only.
 */
int latch_btree_pool_reserve(struct latch_btree_pool *p, size_t want);

/* Take a free node; the caller reserved it.  Writer only. */
struct latch_btree_node *latch_btree_pool_take(struct latch_btree_pool *p);

/*
 * Return @n to its pool.  A reader still inside @n (on a copy the writer
 * is changing, so its retry check fails) may load the free-list link from
 * slot[0]: another node of the same kind, or 0.  Writer only.
 */
void latch_btree_pool_give(struct latch_btree_pool *p, struct latch_btree_node *n);

/* The node after @n on @p's free list (NULL: none).  Writer only (the checkers). */
void *latch_btree_pool_next(const struct latch_btree_pool *p, void *n);

/* Return every region of @p to the system; no reader may be left. */
void latch_btree_pool_free(struct latch_btree_pool *p);

/*
 * Called with every chunk a pool carves (@bytes long), before any of its
 * nodes is used; NULL: no call.  A nonzero return refuses the chunk: it
 * goes back to its region and latch_btree_pool_reserve() fails with
 * -ENOMEM.  Set by src/publish.c for maps published with
 * LATCH_PUBLISH_RESIDENT.
 */
extern int (*latch_btree_chunk_hook_)(const struct latch_btree_pool *p, void *chunk, size_t bytes);

/* Call @fn on every chunk of @p (@bytes: its length).  Writer only. */
void latch_btree_pool_chunks_(const struct latch_btree_pool *p,
                              void (*fn)(void *chunk, size_t bytes, void *ctx), void *ctx);

/*
 * Rebuild @p's free list from its chunks: every node for which
 * @used(@ctx, node) is false.  Writer only (recovery after fork()).
 */
void latch_btree_pool_refill(struct latch_btree_pool *p,
                             bool (*used)(const void *ctx, const struct latch_btree_node *n),
                             const void *ctx);

/* Nodes of @kind each copy of @t uses now, on average (the pools serve both). */
size_t latch_btree_in_use(const struct latch_btree *t, unsigned kind);

/* @a - @b, or 0 when @b is larger: a need beyond what is there. */
static inline size_t latch_btree_sub0(size_t a, size_t b)
{
	return a > b ? a - b : 0;
}

/* Make the pools of @t hold @leaves and @inner more free nodes for each copy.  0 or -ENOMEM. */
int latch_btree_reserve_more(struct latch_btree *t, size_t leaves, size_t inner);

/* ---- descents (btree-descend.c) ---- */

/* What a reader's descent looks for. */
enum latch_btree_mode {
	LATCH_BTREE_EXACT, /* the entry with key x */
	LATCH_BTREE_FLOOR, /* the entry with the greatest key <= x */
	LATCH_BTREE_CEIL,  /* the entry with the least key >= x */
};

/* Number of keys of @n that are <= @x, in 0..16: the reference count.  Relaxed loads. */
static inline unsigned latch_btree_count_le_(const struct latch_btree_node *n, uint64_t x)
{
	unsigned c = 0;

	/* Relaxed: the latch's retry check discards what an attempt read. */
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i++)
		c += LATCH_LOAD_RELAXED(&n->key[i]) <= x;
	return c;
}

/* Number of keys of @n that are < @x, in 0..16.  Relaxed loads. */
static inline unsigned latch_btree_count_lt_(const struct latch_btree_node *n, uint64_t x)
{
	unsigned c = 0;

	/* Relaxed: as in latch_btree_count_le_(). */
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i++)
		c += LATCH_LOAD_RELAXED(&n->key[i]) < x;
	return c;
}

/*
 * The child an inner node @n gives @x: the number of keys 1..15 that are
 * <= @x, in 0..15 (keys increase, so that is the last entry whose bound
 * is <= @x, or entry 0 when @x is below them all).  Relaxed loads.
 */
static inline unsigned latch_btree_child_(const struct latch_btree_node *n, uint64_t x)
{
	unsigned c = latch_btree_count_le_(n, x);

	return c - (c != 0);
}

/* The position of the key @x in leaf @n, or LATCH_BTREE_FANOUT when absent.  Relaxed loads. */
static inline unsigned latch_btree_exact_(const struct latch_btree_node *n, uint64_t x)
{
	unsigned pos = latch_btree_count_lt_(n, x);

	pos -= pos == LATCH_BTREE_FANOUT;
	/* Relaxed: as in latch_btree_count_le_(). */
	return LATCH_LOAD_RELAXED(&n->key[pos]) == x ? pos : LATCH_BTREE_FANOUT;
}

/* The in-node counts readers can use. */
enum latch_btree_count {
	LATCH_BTREE_COUNT_SCALAR = 0, /* relaxed atomic loads: the reference, on every target */
	LATCH_BTREE_COUNT_AVX2 = 1,
	LATCH_BTREE_COUNT_AVX512 = 2,
};

/* The count every descent uses, chosen once when the library is loaded. */
enum latch_btree_count latch_btree_count_in_use(void);
#ifdef LATCH_TEST_HOOKS
/*
 * Make every descent use @count from now on; returns -ENOTSUP (and
 * changes nothing) when the build or the CPU lacks it.  Only before any
 * map is shared.
 */
int latch_btree_use_count_(enum latch_btree_count count);
#endif

/*
 * The entry @mode selects for @x in the copy the counter names, retried
 * until no flip happened meanwhile, copied to *@out.  Never waits.  Any
 * context.  One per kind of leaf, so that a map's lookup reads no end.
 */
bool latch_btree_lookup(const struct latch_btree *t, uint64_t x, enum latch_btree_mode mode,
                        struct latch_btree_ent *out);
bool latch_btree_span_lookup(const struct latch_btree *t, uint64_t x, enum latch_btree_mode mode,
                             struct latch_btree_ent *out);

/*
 * Most keys of one batched lookup: its answers come from one state of the
 * tree.  The faces split longer batches into groups of this size, each
 * its own state (their man pages say so); the stack of one group's
 * answers is about 2 KB.
 */
#define LATCH_BTREE_MANY 64u

/*
 * The entry @mode (exact or floor only) selects for each x[i], i < @n <=
 * LATCH_BTREE_MANY, into out[i] where hit[i]; all from one state, the
 * descents interleaved.  Returns how many hit.  Never waits.  Any context.
 */
size_t latch_btree_lookup_many(const struct latch_btree *t, const uint64_t *x, size_t n,
                               enum latch_btree_mode mode, struct latch_btree_ent *out, bool *hit);
size_t latch_btree_span_lookup_many(const struct latch_btree *t, const uint64_t *x, size_t n,
                                    enum latch_btree_mode mode, struct latch_btree_ent *out,
                                    bool *hit);

/* Entries of @t, read consistently with one copy.  Any context. */
size_t latch_btree_size(const struct latch_btree *t);

/*
 * One reader attempt on copy @cp: the entry @mode selects for @x, copied
 * to *@out.  Memory-safe on any copy, however stale; *@bad says the
 * attempt was abandoned (a NULL child or too deep).  Without the latch:
 * the proof harnesses and tests run it on chosen copies at chosen points.
 */
bool latch_btree_attempt(const struct latch_btree *t, unsigned cp, uint64_t x,
                         enum latch_btree_mode mode, struct latch_btree_ent *out, bool *bad);

/* One level of the writer's descent: the node and the entry taken. */
struct latch_btree_step {
	struct latch_btree_node *node;
	unsigned idx;
};

/*
 * Where a key is, or would go, in one copy: the writer's descent to its
 * leaf (NULL in an empty copy), the leaf's used entries and the index of
 * its first entry whose key is >= the key.  Valid until that copy changes.
 */
struct latch_btree_spot {
	struct latch_btree_step path[LATCH_BTREE_MAX_DEPTH];
	struct latch_btree_node *leaf;
	unsigned depth, used, at;
};

/*
 * Find @key's spot in copies @from..@to (spot[i] for copy from + i),
 * walking them side by side so that their cache misses overlap.  A
 * copy's spot stays valid until that copy changes.  O(log n).  Writer.
 */
void latch_btree_locate(const struct latch_btree *t, unsigned from, unsigned to, uint64_t key,
                        struct latch_btree_spot *spot);

/* ---- changes to one copy (btree-write.c) ---- */

/*
 * Changes to copy @cp at the spot latch_btree_locate() found there, which
 * readers must be kept off.  Insert: @x->key absent, and the nodes an
 * insert can take reserved (latch_btree_reserve_for()); erase and
 * replace: the key present.  Writer only.
 */
void latch_btree_insert_at(struct latch_btree *t, unsigned cp, const struct latch_btree_spot *s,
                           const struct latch_btree_ent *x);
void latch_btree_erase_at(struct latch_btree *t, unsigned cp, const struct latch_btree_spot *s);
void latch_btree_replace_at(const struct latch_btree_spot *s, uintptr_t value);

/*
 * The writer's view of one copy, for the bulk load, the recovery and the
 * checker: only the serialized writer stores nodes, so it reads them with
 * plain loads; every store a reader may load is atomic.
 */
/* Used entries of @n: those before the padding that repeats the last one. */
unsigned latch_btree_node_used(const struct latch_btree_node *n);
/* Read the used entries of @n of @kind into @e; returns how many. */
unsigned latch_btree_node_read(const struct latch_btree *t, unsigned kind,
                               const struct latch_btree_node *n, struct latch_btree_ent *e);
/* Store e[0..c-1] into @n of @kind, padding with copies of e[c-1]. */
void latch_btree_node_write(const struct latch_btree *t, unsigned kind, struct latch_btree_node *n,
                            const struct latch_btree_ent *e, unsigned c);
/* Store copy @cp's root reference (release: it publishes the node) and its size. */
void latch_btree_set_root(struct latch_btree *t, unsigned cp, uintptr_t ref);
void latch_btree_set_size(struct latch_btree *t, unsigned cp, size_t size);
/* Return every node of the subtree @ref to its pool. */
void latch_btree_free_subtree(struct latch_btree *t, uintptr_t ref);

/* ---- the batch engine (btree-commit.c) ---- */

/* What a change of a batch does to the core. */
enum latch_btree_op {
	LATCH_BTREE_INSERT,   /* add the entry; its key must be absent (a span: overlap nothing) */
	LATCH_BTREE_ERASE,    /* remove the entry with the key; it must be present */
	LATCH_BTREE_REPLACE,  /* give the entry with the key the slot; it must be present */
	LATCH_BTREE_ERASE_IF, /* erase, if the entry still has the slot (a span: and the end) */
	LATCH_BTREE_STORE,    /* spans only: erase every span it overlaps, then insert it */
	LATCH_BTREE_BAD_OP,   /* an op the face did not know: -EINVAL in its place */
};

/* One change, as the map and the range map translate theirs. */
struct latch_btree_change {
	enum latch_btree_op op;
	struct latch_btree_ent ent; /* erase: the key only */
};

/*
 * What a lone change removes, for the faces that report it: an erase's
 * entry, a store's evictions in key order.  @put(@ctx, i, e) receives
 * removed entry i for i < @max; @n is set to how many the change removes
 * (a store: how many it overlaps, even when that is more than @max).
 */
struct latch_btree_removed {
	void (*put)(void *ctx, size_t i, const struct latch_btree_ent *e);
	void *ctx;
	size_t max;
	size_t n;
};

/*
 * Changes a batch keeps on the stack; a larger one allocates its undo log
 * (O(n) words) once, and a batch whose stores evict more entries than its
 * log holds replaces it by a larger one.  The map's and the range map's
 * man pages quote it.
 */
#define LATCH_BTREE_LOCAL_BATCH 16u

/*
 * Apply @n changes, @get(@src, i, c) filling change i, as one latch
 * update: each is checked against the idle copy as the ones before it
 * left it and made there; a bad one undoes those made (readers never saw
 * them) and returns its error; otherwise one flip publishes the copy and
 * the changes are replayed on the other.  A single change finds its spot
 * in both copies with one paired descent (a store that evicts k >= 1
 * spans takes k more descents per copy, and one per leaf boundary its
 * evictions cross).  Returns 0, or -EINVAL (an unknown op; a span that
 * does not end after its start; a store into a tree without spans),
 * -EEXIST (an insert of a present key; for spans, one that overlaps a
 * span), -ENOENT (an erase, erase-if or replace of an absent key),
 * -ESTALE (an erase-if of an entry whose slot or end differs), with
 * *@failed the bad change's index and, for -EEXIST, *@hit (unless NULL)
 * the entry it collides with (for spans the one with the lowest start);
 * or -ENOMEM with *@failed = @n.  With @n == 1 and @removed not NULL,
 * @removed learns what the change removes, and a store that would evict
 * more than removed->max entries fails with -ENOSPC instead (removed->n
 * is then how many).  On error the contents are unchanged.  Nothing
 * allocates but the nodes inserts and stores can need (and, in a batch
 * of more than one change, an erase's or a store's undo, reserved as the
 * batch finds how many entries each store evicts) and the undo log of a
 * batch over LATCH_BTREE_LOCAL_BATCH changes or undo entries.  Cost
 * O((n + e) log N) per copy for e evictions.  Writer only, serialized.
 */
int latch_btree_commit(struct latch_btree *t, size_t n,
                       void (*get)(const void *src, size_t i, struct latch_btree_change *c),
                       const void *src, size_t *failed, struct latch_btree_ent *hit,
                       struct latch_btree_removed *removed);

/*
 * Reserve, in both copies, what @changes changes of which @inserts add
 * entries can need.  Returns 0 or -ENOMEM.  Writer only.
 */
int latch_btree_reserve_for(struct latch_btree *t, size_t changes, size_t inserts);

/* Reserve what a tree of @n entries can need.  0 or -ENOMEM.  Writer only. */
int latch_btree_reserve(struct latch_btree *t, size_t n);

/* ---- bulk load and recovery (btree-load.c) ---- */

/*
 * Replace the whole contents by @n entries, in increasing key order:
 * @get(@src, i, e) fills entry i (key, slot, end).  Builds packed nodes,
 * readers see the old contents or the new ones.  Returns 0 or -ENOMEM
 * (the tree is then unchanged).  Writer only.
 */
int latch_btree_load(struct latch_btree *t, size_t n,
                     void (*get)(const void *src, size_t i, struct latch_btree_ent *e),
                     const void *src);

/*
 * After fork(), in the child, when the writer of the parent may have
 * stopped for good inside an update: rebuild the copy readers are not
 * sent to from the one they are (which the latch keeps whole), and the
 * pools' free lists from the chunks.  Readers may run meanwhile.
 * Returns 0 or -ENOMEM (then nothing changed).  Cost O(n log n), once.
 */
int latch_btree_recover(struct latch_btree *t);

/* ---- the invariant checker (btree-check.c) ---- */

/* What latch_btree_check() found in a copy. */
struct latch_btree_census {
	size_t entries, leaves, inner;
	unsigned long long shape; /* a hash of the node sizes in visiting order */
	/* Called with each entry in key order (unless NULL). */
	void (*entry)(void *ctx, const struct latch_btree_ent *e);
	void *ctx;
};

/*
 * Check every invariant of copy @cp: keys strictly increasing, each
 * bound the least key of its subtree (the separator invariant, on which
 * floor lookups and the overlap check rely), node fill, padding, uniform
 * depth, the recorded size and height, and for spans, ends after starts
 * and no overlap; fill in *@census.  Returns 0, or -EPROTO with *@why
 * (unless NULL) naming the first broken invariant.  Cost O(n).  The
 * writer, or anyone while the writer is stopped.
 */
int latch_btree_check(const struct latch_btree *t, unsigned cp, struct latch_btree_census *census,
                      const char **why);

#endif /* LATCH_SRC_BTREE_H */
