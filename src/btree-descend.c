/* SPDX-License-Identifier: MIT */
/*
 * Every descent of the latched B+-tree: the readers' attempts and read
 * loops, and the writer's locate, each compiled once per in-node count
 * (scalar, AVX2, AVX-512) into one table chosen once, when the library
 * is loaded.  Whether leaves carry ends is a constant of each compiled
 * body, so a map's lookup reads no range-only field.
 *
 * The separator invariant (btree-write.c): the bound an inner node holds
 * for child i is exactly the least key of child i's subtree.  So a
 * descent by "greatest bound <= x" reaches a leaf whose first key is <= x
 * (unless x is below every key), and a floor lookup is answered inside
 * that leaf: a range that holds x is never left behind a bound that fell
 * inside it (the failure of GCC PR119151, whose b-tree kept stale bounds
 * after removals).  latch_btree_check() checks it on both copies.
 */
#include <errno.h>

#include "btree.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

/*
 * Mutants of the readers' counts, which tests/map must catch (every
 * count, so whichever the CPU runs): LATCH_DESCEND_MUTANT=1 takes an
 * inner node's child by the keys < x (a probe equal to a bound goes
 * left), 2 finds a leaf's key among its first 8 entries only.
 */
#ifndef LATCH_DESCEND_MUTANT
#define LATCH_DESCEND_MUTANT 0
#endif

/*
 * The in-node counts with SIMD, on x86-64 for 16-key nodes: AVX-512
 * where the CPU has it, else AVX2 (never under ThreadSanitizer, which
 * would rightly report the plain vector loads as races).  They load the
 * 16 keys with plain vector loads (two of 512 bits, or four of 256),
 * which may race with the writer's atomic stores to a copy it is
 * changing: like the reads of a seqlock reader, whatever such a load
 * returns is discarded by the retry check, and the value only selects a
 * position that is in 0..16 whatever the keys are.  The relaxed-atomic
 * counts of btree.h are the reference the tests compare with.
 */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && LATCH_BTREE_FANOUT == 16
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LATCH_BTREE_NO_SIMD
#endif
#endif
#ifndef LATCH_BTREE_NO_SIMD
#define LATCH_BTREE_X86_SIMD 1
#include <immintrin.h>

/*
 * Bit i set when key[i] > @x (@gt) or key[i] < @x (!@gt), keys compared as
 * unsigned.
 */
__attribute__((target("avx2"))) static ALWAYS_INLINE unsigned
mask_avx2(const struct latch_btree_node *n, uint64_t x, bool gt)
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

/* Bit i set when key[i] == @x. */
__attribute__((target("avx2"))) static ALWAYS_INLINE unsigned
mask_eq_avx2(const struct latch_btree_node *n, uint64_t x)
{
	const __m256i xv = _mm256_set1_epi64x((long long)x);
	unsigned mask = 0;

	for (unsigned i = 0; i < LATCH_BTREE_FANOUT; i += 4) {
		/* Plain load: see above. */
		__m256i c = _mm256_cmpeq_epi64(_mm256_load_si256((const __m256i *)&n->key[i]), xv);

		mask |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(c)) << i;
	}
	return mask;
}

/* What mask_avx512() compares: key[i] <= x, key[i] < x, key[i] == x. */
enum { LE, LT, EQ };

/*
 * Bit i set when key[i] compares with @x as @pred says (keys as
 * unsigned), for the keys @keep selects: AVX-512's compares into mask
 * registers, the two halves joined in one of them.
 */
__attribute__((target("avx512f"))) static ALWAYS_INLINE unsigned
mask_avx512(const struct latch_btree_node *n, uint64_t x, int pred, unsigned keep)
{
	const __m512i xv = _mm512_set1_epi64((long long)x);
	/* Plain loads: see above. */
	const __m512i lo = _mm512_load_si512((const void *)&n->key[0]);
	const __m512i hi = _mm512_load_si512((const void *)&n->key[8]);
	const __mmask8 kl = (__mmask8)keep, kh = (__mmask8)(keep >> 8);

	switch (pred) {
	case LE:
		return (unsigned)_mm512_kunpackb(_mm512_mask_cmple_epu64_mask(kh, hi, xv),
		                                 _mm512_mask_cmple_epu64_mask(kl, lo, xv));
	case LT:
		return (unsigned)_mm512_kunpackb(_mm512_mask_cmplt_epu64_mask(kh, hi, xv),
		                                 _mm512_mask_cmplt_epu64_mask(kl, lo, xv));
	default:
		return (unsigned)_mm512_kunpackb(_mm512_mask_cmpeq_epu64_mask(kh, hi, xv),
		                                 _mm512_mask_cmpeq_epu64_mask(kl, lo, xv));
	}
}

__attribute__((target("avx2"))) static ALWAYS_INLINE unsigned
count_le_avx2(const struct latch_btree_node *n, uint64_t x)
{
	return LATCH_BTREE_FANOUT - (unsigned)__builtin_popcount(mask_avx2(n, x, true));
}

__attribute__((target("avx2"))) static ALWAYS_INLINE unsigned
count_lt_avx2(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_popcount(mask_avx2(n, x, false));
}

__attribute__((target("avx2"))) static ALWAYS_INLINE unsigned
child_avx2(const struct latch_btree_node *n, uint64_t x)
{
	if (LATCH_DESCEND_MUTANT == 1)
		return (unsigned)__builtin_popcount(mask_avx2(n, x, false) & 0xfffeu);
	return (unsigned)__builtin_popcount(~mask_avx2(n, x, true) & 0xfffeu);
}

__attribute__((target("avx2"))) static ALWAYS_INLINE unsigned
exact_avx2(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_ctz(
	    (mask_eq_avx2(n, x) & (LATCH_DESCEND_MUTANT == 2 ? 0xffu : ~0u)) |
	    1u << LATCH_BTREE_FANOUT);
}

__attribute__((target("avx512f"))) static ALWAYS_INLINE unsigned
count_le_avx512(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_popcount(mask_avx512(n, x, LE, 0xffffu));
}

__attribute__((target("avx512f"))) static ALWAYS_INLINE unsigned
count_lt_avx512(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_popcount(mask_avx512(n, x, LT, 0xffffu));
}

__attribute__((target("avx512f"))) static ALWAYS_INLINE unsigned
child_avx512(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_popcount(
	    mask_avx512(n, x, LATCH_DESCEND_MUTANT == 1 ? LT : LE, 0xfffeu));
}

__attribute__((target("avx512f"))) static ALWAYS_INLINE unsigned
exact_avx512(const struct latch_btree_node *n, uint64_t x)
{
	return (unsigned)__builtin_ctz(
	    mask_avx512(n, x, EQ, LATCH_DESCEND_MUTANT == 2 ? 0xffu : 0xffffu) |
	    1u << LATCH_BTREE_FANOUT);
}
#endif
#endif

/* The scalar counts: the relaxed-atomic references of btree.h. */
static ALWAYS_INLINE unsigned count_le_scalar(const struct latch_btree_node *n, uint64_t x)
{
	return latch_btree_count_le_(n, x);
}

static ALWAYS_INLINE unsigned count_lt_scalar(const struct latch_btree_node *n, uint64_t x)
{
	return latch_btree_count_lt_(n, x);
}

static ALWAYS_INLINE unsigned child_scalar(const struct latch_btree_node *n, uint64_t x)
{
	if (LATCH_DESCEND_MUTANT == 1)
		return latch_btree_child_(n, x - (x != 0));
	return latch_btree_child_(n, x);
}

static ALWAYS_INLINE unsigned exact_scalar(const struct latch_btree_node *n, uint64_t x)
{
	unsigned pos = latch_btree_exact_(n, x);

	return LATCH_DESCEND_MUTANT == 2 && pos >= 8 ? LATCH_BTREE_FANOUT : pos;
}

typedef unsigned count_fn(const struct latch_btree_node *n, uint64_t x);

/*
 * The in-node counts of one compiled descent, constants of each body:
 * count_le and count_lt count the keys <= and < x (0..16), child gives an
 * inner node's child for x (0..15: latch_btree_child_()), exact the
 * position of x in a leaf (16: absent; latch_btree_exact_()).
 */
#define COUNTS_PARAMS count_fn *count_le, count_fn *count_lt, count_fn *child, count_fn *exact
#define COUNTS_ARGS   count_le, count_lt, child, exact

/*
 * Follow @ref to a leaf, always through slot @at (0: leftmost), at most
 * @depth more levels.  Returns the leaf, or NULL when the attempt must be
 * abandoned.
 */
static const struct latch_btree_node *edge_leaf(uintptr_t ref, unsigned at, unsigned depth)
{
	while (!(ref & LATCH_BTREE_LEAF)) {
		const struct latch_btree_node *n = latch_btree_node_(ref);

		if (!n || depth++ >= LATCH_BTREE_MAX_DEPTH)
			return NULL;
		/* Acquire: pairs with the writer's release store of the reference. */
		ref = LATCH_LOAD_ACQUIRE(&n->slot[at]);
	}
	return latch_btree_node_(ref);
}

/*
 * Start loading the lines of @n's slots (and ends, with @ends) while its
 * keys are counted: the entry the count picks is then read without a
 * second round of cache misses.  A prefetch is no access: it cannot fault
 * nor race, whatever the node holds.
 */
static ALWAYS_INLINE void prefetch_slots(const struct latch_btree_node *n, bool ends)
{
	const char *p = (const char *)n->slot;

	for (size_t at = 0; at < (ends ? 2 : 1) * sizeof(n->slot); at += 64)
		__builtin_prefetch(p + at);
}

/*
 * One lookup attempt on copy @cp.  Memory safety holds for any copy,
 * however stale: a reference with bit 0 clear always points to inner-node
 * memory, whose slots only ever hold references (or 0); a reference with
 * bit 0 set to leaf memory of the tree's one leaf size (@spans, a
 * constant of each compiled body, says which); positions are clamped to
 * 0..15; the descent is capped.  Values are copied, never dereferenced.
 *
 * A floor lookup needs no neighbouring subtree: by the separator
 * invariant (file comment) the leaf the descent reaches starts at or
 * below x unless x is below every key.  A ceil lookup notes the nearest
 * subtree right of the path, for when every key of the leaf is below x.
 */
static ALWAYS_INLINE bool attempt_with(const struct latch_btree *t, unsigned cp, uint64_t x,
                                       enum latch_btree_mode mode, struct latch_btree_ent *out,
                                       bool *bad, bool spans, COUNTS_PARAMS)
{
	/* Acquire: pairs with the writer's release store of the root. */
	uintptr_t ref = LATCH_LOAD_ACQUIRE(&t->copy[cp].root);
	uintptr_t side = 0; /* the nearest subtree right of the path */
	unsigned depth = 0, pos = 0;
	const struct latch_btree_node *leaf;

	*bad = false;
	if (!ref)
		return false;
	while (!(ref & LATCH_BTREE_LEAF)) {
		const struct latch_btree_node *n = latch_btree_node_(ref);

		if (!n || depth++ >= LATCH_BTREE_MAX_DEPTH) {
			*bad = true;
			return false;
		}
		prefetch_slots(n, false);
		unsigned i = child(n, x);

		if (mode == LATCH_BTREE_CEIL && i + 1 < LATCH_BTREE_FANOUT &&
		    LATCH_LOAD_RELAXED(&n->key[i + 1]) != LATCH_LOAD_RELAXED(&n->key[i]))
			side = LATCH_LOAD_ACQUIRE(&n->slot[i + 1]);
		/* Acquire: pairs with the writer's release store of the reference. */
		ref = LATCH_LOAD_ACQUIRE(&n->slot[i]);
	}
	leaf = latch_btree_node_(ref);
	prefetch_slots(leaf, spans);
	switch (mode) {
	case LATCH_BTREE_EXACT:
		pos = exact(leaf, x);
		if (pos == LATCH_BTREE_FANOUT)
			return false;
		break;
	case LATCH_BTREE_FLOOR:
		pos = count_le(leaf, x);
		if (pos == 0)
			return false;
		pos--;
		break;
	case LATCH_BTREE_CEIL:
		pos = count_lt(leaf, x);
		if (pos == LATCH_BTREE_FANOUT) {
			if (!side)
				return false;
			leaf = edge_leaf(side, 0, depth);
			pos = 0;
			if (!leaf) {
				*bad = true;
				return false;
			}
		}
		break;
	}
	/* Relaxed: copied out; the retry check decides whether they count. */
	out->key = mode == LATCH_BTREE_EXACT ? x : LATCH_LOAD_RELAXED(&leaf->key[pos]);
	out->slot = LATCH_LOAD_RELAXED(&leaf->slot[pos]);
	out->end = spans ? LATCH_LOAD_RELAXED(&latch_btree_ends_(leaf)[pos]) : 0;
	return true;
}

/* The read loop around attempt_with(): the latch protocol of latch/seq.h. */
static ALWAYS_INLINE bool lookup_in(const struct latch_btree *t, uint64_t x,
                                    enum latch_btree_mode mode, struct latch_btree_ent *out,
                                    bool spans, COUNTS_PARAMS)
{
	struct latch_btree_ent e = { 0, 0, 0 };
	bool bad = false, hit = false;

	LATCH_SEQ_READ_(&t->seq, cp)
	{
		e = (struct latch_btree_ent){ 0, 0, 0 };
		hit = attempt_with(t, cp, x, mode, &e, &bad, spans, COUNTS_ARGS);
	}
	/* A copy readers are sent to is complete: no attempt on it is abandoned. */
	if (bad)
		return false;
	/* What the flips so far published happens-before, for ThreadSanitizer. */
	latch_tsan_acquire_(&t->seq);
	*out = e;
	return hit;
}

/* lookup_in() compiled once per mode, so that each descent tests only what its mode needs. */
static ALWAYS_INLINE bool lookup_with(const struct latch_btree *t, uint64_t x,
                                      enum latch_btree_mode mode, struct latch_btree_ent *out,
                                      bool spans, COUNTS_PARAMS)
{
	if (mode == LATCH_BTREE_EXACT)
		return lookup_in(t, x, LATCH_BTREE_EXACT, out, spans, COUNTS_ARGS);
	if (mode == LATCH_BTREE_FLOOR)
		return lookup_in(t, x, LATCH_BTREE_FLOOR, out, spans, COUNTS_ARGS);
	return lookup_in(t, x, LATCH_BTREE_CEIL, out, spans, COUNTS_ARGS);
}

/*
 * The writer's descent to @key's spot in copies @from..@to, spot[i] for
 * copy from + i: both copies go level by level side by side, so that
 * their cache misses overlap.  It uses the readers' branchless in-node
 * counts (plain loads would do: only this serialized writer stores
 * nodes).  In an inner node, the child is the last used entry whose bound
 * is <= @key, found from the padding copy the count may end in as the
 * reader does; in the leaf, the used entries are those below entry 15's
 * key (which the padding repeats), plus that one.
 */
static ALWAYS_INLINE void locate_with(const struct latch_btree *t, unsigned from, unsigned to,
                                      uint64_t key, struct latch_btree_spot *spot,
                                      count_fn *count_le, count_fn *count_lt)
{
	uintptr_t r[2];
	bool inner = false;

	for (unsigned i = 0; i <= to - from; i++) {
		r[i] = t->copy[from + i].root;
		spot[i].leaf = NULL;
		spot[i].depth = spot[i].used = spot[i].at = 0;
		inner |= r[i] && !(r[i] & LATCH_BTREE_LEAF);
	}
	while (inner) {
		inner = false;
		for (unsigned i = 0; i <= to - from; i++) {
			struct latch_btree_spot *s = &spot[i];

			if (!r[i] || (r[i] & LATCH_BTREE_LEAF))
				continue;
			struct latch_btree_node *n = latch_btree_node_(r[i]);
			unsigned c = count_le(n, key);
			unsigned at = count_lt(n, n->key[c - (c != 0)]);

			s->path[s->depth].node = n;
			s->path[s->depth++].idx = at;
			r[i] = n->slot[at];
			inner |= !(r[i] & LATCH_BTREE_LEAF);
		}
	}
	for (unsigned i = 0; i <= to - from; i++) {
		struct latch_btree_node *leaf = latch_btree_node_(r[i]);
		unsigned below;

		if (!leaf)
			continue;
		spot[i].leaf = leaf;
		spot[i].used = count_lt(leaf, leaf->key[LATCH_BTREE_FANOUT - 1]) + 1;
		below = count_lt(leaf, key);
		spot[i].at = below < spot[i].used ? below : spot[i].used;
	}
}

/* Descents a batched lookup advances in lockstep: enough misses in flight to hide memory latency. */
#define GROUP 16u

/*
 * Start loading the four lines of the node (keys and slots) @ref points
 * to (none for 0: a prefetch cannot fault).
 */
static ALWAYS_INLINE void prefetch_node(uintptr_t ref)
{
	const char *p = (const char *)latch_btree_node_(ref);

	for (size_t at = 0; at < sizeof(struct latch_btree_node); at += 64)
		__builtin_prefetch(p + at);
}

/* Start loading the two lines of the keys of the node @ref points to (a prefetch cannot fault). */
static ALWAYS_INLINE void prefetch_keys(uintptr_t ref)
{
	const char *p = (const char *)latch_btree_node_(ref)->key;

	for (size_t at = 0; at < sizeof(latch_btree_node_(ref)->key); at += 64)
		__builtin_prefetch(p + at);
}

/*
 * One attempt of a batched lookup on copy @cp: the entry @mode (exact or
 * floor) selects for each x[i], i < @n, into out[i] with hit[i].  The
 * descents of GROUP keys advance level by level in lockstep, each
 * prefetching the node it goes to next while the others count theirs,
 * so that their cache misses overlap (software pipelining, as static
 * search trees and FAST do).  An inner node or a map's leaf is prefetched
 * whole (keys and slots: four lines).  A span leaf has six, of which a
 * lookup needs three: its keys are prefetched first, and once every
 * descent of the group has counted its leaf, the one line of the slot
 * and the one of the end it takes; the answers are copied out in a last
 * pass.  Fewer lines in flight per descent leave room for more descents.
 * Memory safety as attempt_with(): every reference followed by its kind,
 * positions clamped, every descent capped.  Returns false when the
 * attempt was abandoned.
 */
static ALWAYS_INLINE bool many_attempt_with(const struct latch_btree *t, unsigned cp,
                                            const uint64_t *x, size_t n, enum latch_btree_mode mode,
                                            struct latch_btree_ent *out, bool *hit, bool spans,
                                            count_fn *count_le, count_fn *child, count_fn *exact)
{
	/* Acquire: pairs with the writer's release store of the root. */
	uintptr_t root = LATCH_LOAD_ACQUIRE(&t->copy[cp].root);

	for (size_t g = 0; g < n; g += GROUP) {
		size_t m = n - g < GROUP ? n - g : GROUP;
		uintptr_t ref[GROUP];
		unsigned at[GROUP];
		bool inner = root && !(root & LATCH_BTREE_LEAF);

		for (size_t i = 0; i < m; i++)
			ref[i] = root;
		for (unsigned depth = 0; inner; depth++) {
			if (depth >= LATCH_BTREE_MAX_DEPTH)
				return false;
			inner = false;
			for (size_t i = 0; i < m; i++) {
				const struct latch_btree_node *nd = latch_btree_node_(ref[i]);

				/* A stale copy may have leaves at different depths. */
				if (ref[i] & LATCH_BTREE_LEAF)
					continue;
				if (!nd)
					return false;
				/* Acquire: pairs with the writer's release store of the reference. */
				ref[i] = LATCH_LOAD_ACQUIRE(&nd->slot[child(nd, x[g + i])]);
				if (spans && (ref[i] & LATCH_BTREE_LEAF))
					prefetch_keys(ref[i]);
				else
					prefetch_node(ref[i]);
				inner |= !(ref[i] & LATCH_BTREE_LEAF);
			}
		}
		for (size_t i = 0; i < m; i++) {
			const struct latch_btree_node *leaf = latch_btree_node_(ref[i]);
			uint64_t k = x[g + i];
			unsigned pos;

			if (!leaf) { /* an empty copy */
				at[i] = LATCH_BTREE_FANOUT;
				continue;
			}
			if (mode == LATCH_BTREE_EXACT) {
				pos = exact(leaf, k);
			} else {
				pos = count_le(leaf, k);
				pos = pos ? pos - 1 : LATCH_BTREE_FANOUT;
			}
			at[i] = pos;
			if (spans && pos < LATCH_BTREE_FANOUT) {
				__builtin_prefetch(&leaf->slot[pos]);
				__builtin_prefetch(&latch_btree_ends_(leaf)[pos]);
			}
		}
		for (size_t i = 0; i < m; i++) {
			const struct latch_btree_node *leaf = latch_btree_node_(ref[i]);
			unsigned pos = at[i];

			hit[g + i] = pos < LATCH_BTREE_FANOUT;
			if (!hit[g + i])
				continue;
			/* Relaxed: copied out; the retry check decides whether they count. */
			out[g + i].key = mode == LATCH_BTREE_EXACT
			                     ? x[g + i]
			                     : LATCH_LOAD_RELAXED(&leaf->key[pos]);
			out[g + i].slot = LATCH_LOAD_RELAXED(&leaf->slot[pos]);
			out[g + i].end =
			    spans ? LATCH_LOAD_RELAXED(&latch_btree_ends_(leaf)[pos]) : 0;
		}
	}
	return true;
}

/*
 * The read loop around many_attempt_with(): every answer from the one copy
 * the last attempt read, so from one state of the tree.
 */
static ALWAYS_INLINE size_t lookup_many_in(const struct latch_btree *t, const uint64_t *x, size_t n,
                                           enum latch_btree_mode mode, struct latch_btree_ent *out,
                                           bool *hit, bool spans, count_fn *count_le,
                                           count_fn *child, count_fn *exact)
{
	bool whole = true;
	size_t hits = 0;

	LATCH_SEQ_READ_(&t->seq, cp)
	whole = many_attempt_with(t, cp, x, n, mode, out, hit, spans, count_le, child, exact);
	/* What the flips so far published happens-before, for ThreadSanitizer. */
	latch_tsan_acquire_(&t->seq);
	/* A copy readers are sent to is complete: no attempt on it is abandoned. */
	for (size_t i = 0; i < n; i++) {
		hit[i] = whole && hit[i];
		hits += hit[i];
	}
	return hits;
}

/* lookup_many_in() compiled once per mode (exact or floor). */
static ALWAYS_INLINE size_t lookup_many_with(const struct latch_btree *t, const uint64_t *x,
                                             size_t n, enum latch_btree_mode mode,
                                             struct latch_btree_ent *out, bool *hit, bool spans,
                                             count_fn *count_le, count_fn *child, count_fn *exact)
{
	if (mode == LATCH_BTREE_EXACT)
		return lookup_many_in(t, x, n, LATCH_BTREE_EXACT, out, hit, spans, count_le, child,
		                      exact);
	return lookup_many_in(t, x, n, LATCH_BTREE_FLOOR, out, hit, spans, count_le, child, exact);
}

/* The descents compiled for one in-node count. */
struct descents {
	bool (*attempt[2])(const struct latch_btree *t, unsigned cp, uint64_t x,
	                   enum latch_btree_mode mode, struct latch_btree_ent *out, bool *bad);
	bool (*lookup[2])(const struct latch_btree *t, uint64_t x, enum latch_btree_mode mode,
	                  struct latch_btree_ent *out);
	size_t (*lookup_many[2])(const struct latch_btree *t, const uint64_t *x, size_t n,
	                         enum latch_btree_mode mode, struct latch_btree_ent *out,
	                         bool *hit);
	void (*locate)(const struct latch_btree *t, unsigned from, unsigned to, uint64_t key,
	               struct latch_btree_spot *spot);
};

/*
 * DESCENTS(name, target): the functions of one table entry, for leaves
 * without ends ([0]) and with them ([1]), with the counts count_le_##name,
 * count_lt_##name, child_##name and exact_##name.
 */
#define COUNTS(name)      count_le_##name, count_lt_##name, child_##name, exact_##name
#define MANY_COUNTS(name) count_le_##name, child_##name, exact_##name
#define DESCENTS(name, target)                                                                     \
	target static bool name##_attempt(const struct latch_btree *t, unsigned cp, uint64_t x,    \
	                                  enum latch_btree_mode mode, struct latch_btree_ent *out, \
	                                  bool *bad)                                               \
	{                                                                                          \
		return attempt_with(t, cp, x, mode, out, bad, false, COUNTS(name));                \
	}                                                                                          \
	target static bool name##_span_attempt(const struct latch_btree *t, unsigned cp,           \
	                                       uint64_t x, enum latch_btree_mode mode,             \
	                                       struct latch_btree_ent *out, bool *bad)             \
	{                                                                                          \
		return attempt_with(t, cp, x, mode, out, bad, true, COUNTS(name));                 \
	}                                                                                          \
	target static bool name##_lookup(const struct latch_btree *t, uint64_t x,                  \
	                                 enum latch_btree_mode mode, struct latch_btree_ent *out)  \
	{                                                                                          \
		return lookup_with(t, x, mode, out, false, COUNTS(name));                          \
	}                                                                                          \
	target static bool name##_span_lookup(const struct latch_btree *t, uint64_t x,             \
	                                      enum latch_btree_mode mode,                          \
	                                      struct latch_btree_ent *out)                         \
	{                                                                                          \
		return lookup_with(t, x, mode, out, true, COUNTS(name));                           \
	}                                                                                          \
	target static size_t name##_lookup_many(const struct latch_btree *t, const uint64_t *x,    \
	                                        size_t n, enum latch_btree_mode mode,              \
	                                        struct latch_btree_ent *out, bool *hit)            \
	{                                                                                          \
		return lookup_many_with(t, x, n, mode, out, hit, false, MANY_COUNTS(name));        \
	}                                                                                          \
	target static size_t name##_span_lookup_many(                                              \
	    const struct latch_btree *t, const uint64_t *x, size_t n, enum latch_btree_mode mode,  \
	    struct latch_btree_ent *out, bool *hit)                                                \
	{                                                                                          \
		return lookup_many_with(t, x, n, mode, out, hit, true, MANY_COUNTS(name));         \
	}                                                                                          \
	target static void name##_locate(const struct latch_btree *t, unsigned from, unsigned to,  \
	                                 uint64_t key, struct latch_btree_spot *spot)              \
	{                                                                                          \
		locate_with(t, from, to, key, spot, count_le_##name, count_lt_##name);             \
	}

#define DESCENTS_ENTRY(name)                                                                       \
	{                                                                                          \
		{ name##_attempt, name##_span_attempt }, { name##_lookup, name##_span_lookup },    \
		    { name##_lookup_many, name##_span_lookup_many }, name##_locate                 \
	}

DESCENTS(scalar, )
#ifdef LATCH_BTREE_X86_SIMD
DESCENTS(avx2, __attribute__((target("avx2"))))
DESCENTS(avx512, __attribute__((target("avx512f"))))
#endif

static const struct descents table[] = {
	[LATCH_BTREE_COUNT_SCALAR] = DESCENTS_ENTRY(scalar),
#ifdef LATCH_BTREE_X86_SIMD
	[LATCH_BTREE_COUNT_AVX2] = DESCENTS_ENTRY(avx2),
	[LATCH_BTREE_COUNT_AVX512] = DESCENTS_ENTRY(avx512),
#endif
};

/*
 * The table every descent uses.  The scalar one until the library's
 * constructor below chose the best the CPU has, before main() and so
 * before any thread that could read it: plain accesses.
 */
static enum latch_btree_count in_use = LATCH_BTREE_COUNT_SCALAR;

/* Can this build and this CPU run @count? */
static bool count_available(enum latch_btree_count count)
{
	switch (count) {
	case LATCH_BTREE_COUNT_SCALAR:
		return true;
#ifdef LATCH_BTREE_X86_SIMD
	case LATCH_BTREE_COUNT_AVX2:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx2");
	case LATCH_BTREE_COUNT_AVX512:
		__builtin_cpu_init();
		return __builtin_cpu_supports("avx512f");
#else
	default:
		return false;
#endif
	}
	return false;
}

__attribute__((constructor)) static void choose_count(void)
{
	if (count_available(LATCH_BTREE_COUNT_AVX512))
		in_use = LATCH_BTREE_COUNT_AVX512;
	else if (count_available(LATCH_BTREE_COUNT_AVX2))
		in_use = LATCH_BTREE_COUNT_AVX2;
}

enum latch_btree_count latch_btree_count_in_use(void)
{
	return in_use;
}

#ifdef LATCH_TEST_HOOKS
int latch_btree_use_count_(enum latch_btree_count count)
{
	if (!count_available(count))
		return -ENOTSUP;
	in_use = count;
	return 0;
}
#endif

bool latch_btree_attempt(const struct latch_btree *t, unsigned cp, uint64_t x,
                         enum latch_btree_mode mode, struct latch_btree_ent *out, bool *bad)
{
	return table[in_use].attempt[t->spans](t, cp & 1u, x, mode, out, bad);
}

bool latch_btree_lookup(const struct latch_btree *t, uint64_t x, enum latch_btree_mode mode,
                        struct latch_btree_ent *out)
{
	return table[in_use].lookup[0](t, x, mode, out);
}

bool latch_btree_span_lookup(const struct latch_btree *t, uint64_t x, enum latch_btree_mode mode,
                             struct latch_btree_ent *out)
{
	return table[in_use].lookup[1](t, x, mode, out);
}

size_t latch_btree_lookup_many(const struct latch_btree *t, const uint64_t *x, size_t n,
                               enum latch_btree_mode mode, struct latch_btree_ent *out, bool *hit)
{
	return table[in_use].lookup_many[0](t, x, n, mode, out, hit);
}

size_t latch_btree_span_lookup_many(const struct latch_btree *t, const uint64_t *x, size_t n,
                                    enum latch_btree_mode mode, struct latch_btree_ent *out,
                                    bool *hit)
{
	return table[in_use].lookup_many[1](t, x, n, mode, out, hit);
}

void latch_btree_locate(const struct latch_btree *t, unsigned from, unsigned to, uint64_t key,
                        struct latch_btree_spot *spot)
{
	table[in_use].locate(t, from, to, key, spot);
}

size_t latch_btree_size(const struct latch_btree *t)
{
	size_t size = 0;

	/* Relaxed: the loop's retry check makes it consistent with its copy. */
	LATCH_SEQ_READ_(&t->seq, cp) size = LATCH_LOAD_RELAXED(&t->copy[cp].size);
	return size;
}
