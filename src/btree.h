/* SPDX-License-Identifier: MIT */
/*
 * The node core of the latched B+-trees: fixed-size nodes, references
 * that carry the kind of the node they point to, type-stable node pools
 * and the in-node searches readers use.
 *
 * A node holds 16 keys and 16 slots.  A node with c < 16 used entries
 * fills entries c..15 with copies of entry c-1 (key and slot), so a
 * branchless count over all 16 keys finds the right entry without
 * knowing c, and every position stays inside the node.  Leaves hold
 * (key, value) entries; inner nodes hold (lower bound, child) entries,
 * where every key of child i is >= key[i] and < key[i+1].
 *
 * References: a slot of an inner node, and a copy's root, hold a node's
 * address with bit 0 set for a leaf and clear for an inner node.  Nodes
 * come from two pools, one per kind, whose memory is only ever used for
 * that kind and is returned to the system only by latch_btree_pool_free():
 * since a node's kind never changes, every reference ever stored names
 * the kind of the memory it points to, however stale the reader's view.
 */
#ifndef LATCH_SRC_BTREE_H
#define LATCH_SRC_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <latch/atomic.h>
#include <latch/map.h> /* struct latch_btree_pool_ (latch/detail/map.h) */

#include "tsan.h"

/* Entries per node. */
#define LATCH_BTREE_FANOUT    16u
/* Fewest entries of a node other than the root (half of a node). */
#define LATCH_BTREE_MIN       8u
/* Longest descent a reader follows before it abandons its attempt. */
#define LATCH_BTREE_MAX_DEPTH 32u
/* Nodes per chunk a pool allocates at once. */
#define LATCH_BTREE_CHUNK     64u

/* Bit 0 of a reference: the node is a leaf. */
#define LATCH_BTREE_LEAF ((uintptr_t)1)

/* 256 bytes on 64-bit targets (four cache lines), 192 on 32-bit ones. */
struct latch_btree_node {
	uint64_t key[LATCH_BTREE_FANOUT];
	uintptr_t slot[LATCH_BTREE_FANOUT]; /* leaf: value; inner: child reference */
} __attribute__((aligned(64)));

/* A type-stable pool of nodes of one kind (declared in latch/detail/map.h). */
#define latch_btree_pool latch_btree_pool_

/*
 * The allocator of every chunk and scratch array, aligned_alloc() unless
 * a test replaces it to inject failures.  Memory it returns is released
 * with free().
 */
extern void *(*latch_btree_alloc_)(size_t align, size_t size);

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

/* Number of keys of @n that are <= @x, in 0..16.  Readers: relaxed loads. */
static inline unsigned latch_btree_count_le_(const struct latch_btree_node *n, uint64_t x)
{
	unsigned c = 0;

	/* Relaxed: the latch's retry check discards what an attempt read. */
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i++)
		c += LATCH_LOAD_RELAXED(&n->key[i]) <= x;
	return c;
}

/* Number of keys of @n that are < @x, in 0..16.  Readers: relaxed loads. */
static inline unsigned latch_btree_count_lt_(const struct latch_btree_node *n, uint64_t x)
{
	unsigned c = 0;

	/* Relaxed: as in latch_btree_count_le_(). */
	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i++)
		c += LATCH_LOAD_RELAXED(&n->key[i]) < x;
	return c;
}

/*
 * The in-node counts with SIMD, chosen at run time on x86-64 CPUs: with
 * AVX-512 where the CPU has it, else with AVX2 (never under
 * ThreadSanitizer, which would rightly report the plain vector loads as
 * races).  They load the 16 keys with plain vector loads (two of 512
 * bits, or four of 256), which may race with the writer's atomic stores
 * to a copy it is changing: like the reads of a seqlock reader, whatever
 * such a load returns is discarded by the retry check, and the value only
 * selects a position that is in 0..16 whatever the keys are.  The
 * relaxed-atomic counts above are the reference the tests compare with.
 */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LATCH_BTREE_NO_SIMD
#endif
#endif
#ifndef LATCH_BTREE_NO_SIMD
#define LATCH_BTREE_X86_SIMD 1
#include <immintrin.h>

/* Bit i set when key[i] > @x (@gt) or key[i] < @x (!@gt), keys compared as unsigned. */
__attribute__((target("avx2"))) static inline unsigned
latch_btree_mask_avx2_(const struct latch_btree_node *n, uint64_t x, bool gt)
{
	/* Biased by 2^63, the signed compare orders the keys as unsigned. */
	const __m256i bias = _mm256_set1_epi64x((long long)(1ull << 63));
	const __m256i xv = _mm256_xor_si256(_mm256_set1_epi64x((long long)x), bias);
	unsigned mask = 0;

	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i += 4) {
		/* Plain load: see above. */
		__m256i k = _mm256_xor_si256(_mm256_load_si256((const __m256i *)&n->key[i]), bias);
		__m256i c = gt ? _mm256_cmpgt_epi64(k, xv) : _mm256_cmpgt_epi64(xv, k);

		mask |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(c)) << i;
	}
	return mask;
}

/* As latch_btree_mask_avx2_(), with AVX-512's unsigned compares into mask registers. */
__attribute__((target("avx512f"))) static inline unsigned
latch_btree_mask_avx512_(const struct latch_btree_node *n, uint64_t x, bool gt)
{
	const __m512i xv = _mm512_set1_epi64((long long)x);
	/* Plain loads: see above. */
	const __m512i lo = _mm512_load_si512((const void *)&n->key[0]);
	const __m512i hi = _mm512_load_si512((const void *)&n->key[8]);

	if (gt)
		return (unsigned)_mm512_cmpgt_epu64_mask(lo, xv) |
		       (unsigned)_mm512_cmpgt_epu64_mask(hi, xv) << 8;
	return (unsigned)_mm512_cmplt_epu64_mask(lo, xv) | (unsigned)_mm512_cmplt_epu64_mask(hi, xv)
	                                                       << 8;
}

/* As latch_btree_count_le_(), with AVX2. */
__attribute__((target("avx2"))) static inline unsigned
latch_btree_count_le_avx2_(const struct latch_btree_node *n, uint64_t x)
{
	return LATCH_BTREE_FANOUT -
	       (unsigned)__builtin_popcount(latch_btree_mask_avx2_(n, x, true));
}

/* As latch_btree_count_lt_(), with AVX2. */
__attribute__((target("avx2"))) static inline unsigned
latch_btree_count_lt_avx2_(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_popcount(latch_btree_mask_avx2_(n, x, false));
}

/* As latch_btree_count_le_(), with AVX-512. */
__attribute__((target("avx512f"))) static inline unsigned
latch_btree_count_le_avx512_(const struct latch_btree_node *n, uint64_t x)
{
	return LATCH_BTREE_FANOUT -
	       (unsigned)__builtin_popcount(latch_btree_mask_avx512_(n, x, true));
}

/* As latch_btree_count_lt_(), with AVX-512. */
__attribute__((target("avx512f"))) static inline unsigned
latch_btree_count_lt_avx512_(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_popcount(latch_btree_mask_avx512_(n, x, false));
}
#endif
#endif

/* The in-node counts readers can use. */
enum latch_btree_count {
	LATCH_BTREE_COUNT_SCALAR = 0, /* relaxed atomic loads: the reference, on every target */
	LATCH_BTREE_COUNT_AVX2 = 1,
	LATCH_BTREE_COUNT_AVX512 = 2,
};

/*
 * Which in-node count readers use (an enum latch_btree_count), or -1
 * until the first latch_btree_init_() picks the best the CPU has.  Tests
 * set it before that to check a given count; a SIMD count the build lacks
 * (no x86-64, ThreadSanitizer) falls back to the scalar one.
 */
extern int latch_btree_simd_;

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

/* Release every chunk of @p; no reader may be left.  Writer only. */
void latch_btree_pool_free(struct latch_btree_pool *p);

/*
 * Called with every chunk a pool allocates (@bytes long), before any of
 * its nodes is used; NULL: no call.  A nonzero return refuses the chunk:
 * it is freed and latch_btree_pool_reserve() fails with -ENOMEM.  Set by
 * src/publish.c for maps published with LATCH_PUBLISH_RESIDENT.
 */
extern int (*latch_btree_chunk_hook_)(const struct latch_btree_pool *p, void *chunk, size_t bytes);

/* Call @fn on every chunk of @p (@bytes: its length).  Writer only. */
void latch_btree_pool_chunks_(const struct latch_btree_pool *p,
                              void (*fn)(void *chunk, size_t bytes, void *ctx), void *ctx);

/* ---- the tree core shared by latch_map and latch_range_map ---- */

/*
 * A leaf of a tree whose entries are spans (a range map's): the node,
 * then the end of each entry, padded like the keys and slots.  384 bytes
 * on 64-bit targets, 256 on 32-bit ones.
 */
struct latch_btree_span_leaf {
	struct latch_btree_node node;
	uintptr_t end[LATCH_BTREE_FANOUT];
} __attribute__((aligned(64)));

/* The ends of a span leaf. */
static inline uintptr_t *latch_btree_ends_(const struct latch_btree_node *n)
{
	return ((struct latch_btree_span_leaf *)(uintptr_t)n)->end;
}

/* An entry as the writer moves it and readers copy it out. */
struct latch_btree_ent {
	uint64_t key;
	uintptr_t slot; /* leaf: value; inner: child reference */
	uintptr_t end;  /* leaves of a span tree only */
};

/* What a reader's descent looks for. */
enum latch_btree_mode {
	LATCH_BTREE_EXACT, /* the entry with key x */
	LATCH_BTREE_FLOOR, /* the entry with the greatest key <= x */
	LATCH_BTREE_CEIL,  /* the entry with the least key >= x */
};

/*
 * Make @t an empty tree; @spans: its leaves hold an end per entry.
 * Cost O(1).  Before sharing.
 */
void latch_btree_init_(struct latch_map *t, bool spans);

/* Release every node of @t; no reader may be left. */
void latch_btree_destroy_(struct latch_map *t);

/*
 * One reader attempt on copy @cp: the entry @mode selects for @x, copied
 * to *@out.  Memory-safe on any copy, however stale; *@bad says the
 * attempt was abandoned (a NULL child or too deep).  Without the latch:
 * lookups wrap it in the read loop, the writer runs it on the idle copy,
 * and the proof harnesses replay it at chosen points.
 */
bool latch_btree_attempt_(const struct latch_map *t, unsigned cp, uint64_t x,
                          enum latch_btree_mode mode, struct latch_btree_ent *out, bool *bad);

/*
 * The entry @mode selects for @x in the copy the counter names, retried
 * until no flip happened meanwhile.  Never waits.  Any context.
 */
bool latch_btree_lookup_(const struct latch_map *t, uint64_t x, enum latch_btree_mode mode,
                         struct latch_btree_ent *out);

/* Entries of @t, read consistently with one copy.  Any context. */
size_t latch_btree_size_(const struct latch_map *t);

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
 * Find @key's spot in each copy, spot[cp] for copy cp, walking both side
 * by side; returns whether @key is in the idle copy.  A copy's spot stays
 * valid until that copy changes, so the replay onto the second copy can
 * use the spot found before the first one changed.  O(log n).  Writer only.
 */
bool latch_btree_locate_both_(const struct latch_map *t, uint64_t key,
                              struct latch_btree_spot spot[2]);

/*
 * Changes to one copy, which readers must be kept off.  Insert: @x->key
 * absent; erase and replace: @key present.  The nodes an insert can take
 * must be reserved (latch_btree_reserve_inserts_()).  Writer only.
 */
void latch_btree_insert_(struct latch_map *t, unsigned cp, const struct latch_btree_ent *x);
void latch_btree_erase_(struct latch_map *t, unsigned cp, uint64_t key);
void latch_btree_replace_(struct latch_map *t, unsigned cp, uint64_t key, uintptr_t value);
/* The same at the spot latch_btree_locate_both_() found for the key in copy @cp. */
void latch_btree_insert_at_(struct latch_map *t, unsigned cp, const struct latch_btree_spot *s,
                            const struct latch_btree_ent *x);
void latch_btree_erase_at_(struct latch_map *t, unsigned cp, const struct latch_btree_spot *s);
void latch_btree_replace_at_(const struct latch_btree_spot *s, uintptr_t value);

/*
 * Make one update, described by @apply, so that readers see it whole or
 * not at all: @apply changes the idle copy, one flip sends readers to it,
 * @apply replays the change on the copy they left.  Writer only.
 */
void latch_btree_write_(struct latch_map *t,
                        void (*apply)(struct latch_map *t, unsigned cp, const void *ctx),
                        const void *ctx);

/*
 * The flip of an update of @t: latch_seq_write_flip() on its counter,
 * returning the copy to replay the update on.  Writer only.
 *
 * ThreadSanitizer, when the process runs it, cannot see the flip's
 * release store inside a library built without it, so the values the
 * update publishes (pointers to objects the caller initialised before
 * the call) would seem to race with the readers that use them.  The flip
 * therefore first releases @t to it, and latch_btree_lookup_() acquires
 * @t after every attempt that passed its retry check (src/tsan.h; no
 * cost beyond a compare without ThreadSanitizer).  That pairing is
 * enough: such an attempt read the copy the last flip it saw published,
 * every entry of which was stored before that flip and so before its
 * release, which ThreadSanitizer keeps, joined with the later ones, for
 * every later acquire.  Readers of a range map or map never reach the
 * caller's memory inside the library, so nothing needs an acquire before
 * the retry check.
 */
static inline unsigned latch_btree_flip_(struct latch_map *t)
{
	latch_tsan_release_(t);
	return latch_seq_write_flip(&t->seq);
}

/*
 * Reserve, in both copies, what @changes changes can need, @inserts of
 * them insertions (the others erasures, which free nodes, or changes
 * that allocate nothing): then no change of the update can fail.
 * Returns 0 or -ENOMEM.  Writer only.
 */
int latch_btree_reserve_inserts_(struct latch_map *t, size_t changes, size_t inserts);

/* Reserve what a tree of @n entries can need.  0 or -ENOMEM.  Writer only. */
int latch_btree_reserve_(struct latch_map *t, size_t n);

/*
 * Replace the whole contents by @n entries, in increasing key order:
 * @get(@src, i, e) fills entry i (key, slot, end).  Builds packed nodes,
 * readers see the old contents or the new ones.  Returns 0 or -ENOMEM
 * (the tree is then unchanged).  Writer only.
 */
int latch_btree_load_(struct latch_map *t, size_t n,
                      void (*get)(const void *src, size_t i, struct latch_btree_ent *e),
                      const void *src);

/*
 * After fork(), in the child, when the writer of the parent may have
 * stopped for good inside an update: rebuild the copy readers are not
 * sent to from the one they are (which the latch keeps whole), and the
 * pools' free lists from the chunks.  Readers may run meanwhile.
 * Returns 0 or -ENOMEM (then nothing changed).  Cost O(n log n), once.
 */
int latch_btree_recover_(struct latch_map *t);

#endif /* LATCH_SRC_BTREE_H */
