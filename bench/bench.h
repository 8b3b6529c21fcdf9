/* SPDX-License-Identifier: MIT */
/*
 * latchbench's view of a peer: every structure it measures, liblatch's
 * included, is driven through this table of functions.
 *
 * A peer owns a pool of @capacity elements, addressed by slot.  The
 * driver decides which slot holds which key and keeps that pairing for
 * the whole run: erasing slot i and inserting it again with the same key
 * is one "insert+erase pair".  Keys in the pool are immutable while the
 * element is in the structure.
 *
 * Lookups are measured through find_many(), which each peer builds with
 * BENCH_FIND_MANY so that its own lookup is inlined into the loop and no
 * peer pays an indirect call per lookup.
 */
#ifndef LATCH_BENCH_H
#define LATCH_BENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* How a find_many() call goes through its keys. */
enum bench_walk {
	/* In order: lookups are independent and overlap (throughput). */
	BENCH_INDEPENDENT,
	/*
	 * Each key's index depends on the previous lookup's answer, so a
	 * lookup cannot start before the one before it has answered (latency).
	 */
	BENCH_DEPENDENT,
	/* In order, also counting the answers that point to the right key (a check). */
	BENCH_VERIFY,
};

/* What a find_many() call adds up, and (walk, span) how it goes. */
struct bench_tally {
	unsigned long hits;     /* lookups that found their key */
	unsigned long retries;  /* repeated attempts (find_counted() only) */
	unsigned long verified; /* BENCH_VERIFY: hits whose answer holds (bench_answer_holds) */
	enum bench_walk walk;   /* in: BENCH_INDEPENDENT unless set */
	unsigned long span;     /* in: the span BENCH_VERIFY checks answers with */
	/*
	 * in: look the keys up in batches of this many, each one call of the
	 * peer's batched lookup (peers with find_batch only; 0: one by one).
	 */
	size_t batch;
};

/* Readers may run on other threads while the writer updates. */
#define BENCH_SHARED       1u
/* Exact-key lookups only: the structure keeps no order. */
#define BENCH_HASH         2u
/* A hit's answer points to the key it found, a long (--selfcheck and warm-ups verify it). */
#define BENCH_ANSWER_KEY   4u
/* A hit's answer points to the start of the range it found, a long (likewise). */
#define BENCH_ANSWER_RANGE 8u

struct bench_peer {
	const char *name;
	unsigned flags;
	/* An empty structure with a pool of @capacity slots, or NULL. */
	void *(*create)(size_t capacity);
	void (*destroy)(void *peer);
	/* Fill slots 0..n-1 with keys[0..n-1] (optional; else insert() n times). */
	void (*load)(void *peer, const long *keys, size_t n);
	/* Writer: put slot @slot, holding @key, into the structure. */
	void (*insert)(void *peer, size_t slot, long key);
	/* Writer: take slot @slot out of the structure. */
	void (*erase)(void *peer, size_t slot);
	/* Reader: look up keys[0..n-1]. */
	void (*find_many)(void *peer, const long *keys, size_t n, struct bench_tally *t);
	/*
	 * Optional: look up keys[0..n-1] (an independent or verifying walk)
	 * with the structure's batched lookup, t->batch keys per call.
	 */
	void (*find_batch)(void *peer, const long *keys, size_t n, struct bench_tally *t);
	/* Optional (ordered peers): the greatest key <= keys[i], for every i; a hit finds one. */
	void (*floor_many)(void *peer, const long *keys, size_t n, struct bench_tally *t);
	/* Optional: one atomic batch inserting (or erasing) slots[0..n-1], n <= BENCH_MAX_BATCH. */
	void (*commit)(void *peer, const size_t *slots, size_t n, bool insert);
	/* Optional: fill slots 0..n-1 from keys[0..n-1], increasing, in one bulk operation. */
	void (*load_sorted)(void *peer, const long *keys, size_t n);
	/* Optional: find_many() that also counts retries (concurrent workloads). */
	void (*find_counted)(void *peer, const long *keys, size_t n, struct bench_tally *t);
	/* Optional: called by each reader thread before and after its lookups. */
	void (*reader_enter)(void);
	void (*reader_exit)(void);
};

/*
 * The index after @i (of @n) in a BENCH_DEPENDENT walk: i + 1, plus the top
 * bit of @answer's address, which is 0 for NULL and for user-space pointers
 * on 64-bit Linux.  The compiler cannot know that, so the next key's load
 * waits for this answer: the lookups form one chain.
 */
static inline size_t bench_next_index(size_t i, const void *answer, size_t n)
{
	i += 1 + (size_t)((uintptr_t)answer >> (sizeof(uintptr_t) * CHAR_BIT - 1));
	return i < n ? i : 0;
}

/* Whether @answer points to a long s with s <= @key < s + @span. */
static inline bool bench_answer_holds(const void *answer, long key, unsigned long span)
{
	return answer && (unsigned long)key - (unsigned long)*(const long *)answer < span;
}

/*
 * Defines find_batch function @fname for a peer of type @type, whose
 * batched lookup is the statement @lookup: it answers the @k keys at
 * @keys (const uint64_t *) into @answers (const void *[], NULL for a miss).
 */
#define BENCH_FIND_BATCH(fname, type, lookup)                                                      \
	static void fname(void *peer, const long *longs, size_t n, struct bench_tally *t)          \
	{                                                                                          \
		type *p = (type *)peer;                                                            \
		const void *answers[BENCH_MAX_LOOKUP_BATCH];                                       \
		uint64_t keys[BENCH_MAX_LOOKUP_BATCH];                                             \
                                                                                                   \
		for (size_t at = 0; at < n; at += t->batch) {                                      \
			size_t k = n - at < t->batch ? n - at : t->batch;                          \
                                                                                                   \
			for (size_t i = 0; i < k; i++)                                             \
				keys[i] = (uint64_t)longs[at + i];                                 \
			lookup;                                                                    \
			for (size_t i = 0; i < k; i++) {                                           \
				t->hits += answers[i] != NULL;                                     \
				if (t->walk == BENCH_VERIFY)                                       \
					t->verified += bench_answer_holds(answers[i],              \
					                                  longs[at + i], t->span); \
			}                                                                          \
		}                                                                                  \
	}

/* The largest batch a find_batch() call is given. */
#define BENCH_MAX_LOOKUP_BATCH 256

/*
 * Defines find_many function @fname for a peer of type @type: for every
 * key, @found (an expression using `p`, `key` and `t`) is non-NULL on a hit.
 * The lookup is forced inline into each walk's loop, so the independent
 * walk is the plain loop over the keys it always was.
 */
#define BENCH_FIND_MANY(fname, type, found)                                                        \
	static inline __attribute__((always_inline))                                               \
	const void *fname##_one(type *p, long key, struct bench_tally *t)                          \
	{                                                                                          \
		(void)p;                                                                           \
		(void)t;                                                                           \
		return (found);                                                                    \
	}                                                                                          \
	static void fname(void *peer, const long *keys, size_t n, struct bench_tally *t)           \
	{                                                                                          \
		type *p = (type *)peer;                                                            \
		unsigned long hits = 0;                                                            \
                                                                                                   \
		if (t->walk == BENCH_DEPENDENT) {                                                  \
			for (size_t i = 0, done = 0; done < n; done++) {                           \
				const void *answer = fname##_one(p, keys[i], t);                   \
                                                                                                   \
				hits += answer != NULL;                                            \
				i = bench_next_index(i, answer, n);                                \
			}                                                                          \
		} else if (t->walk == BENCH_VERIFY) {                                              \
			for (size_t i = 0; i < n; i++) {                                           \
				const void *answer = fname##_one(p, keys[i], t);                   \
                                                                                                   \
				hits += answer != NULL;                                            \
				t->verified += bench_answer_holds(answer, keys[i], t->span);       \
			}                                                                          \
		} else {                                                                           \
			for (size_t i = 0; i < n; i++)                                             \
				hits += fname##_one(p, keys[i], t) != NULL;                        \
		}                                                                                  \
		t->hits += hits;                                                                   \
	}

/*
 * A zeroed peer of @size bytes whose pointer member at @pool_offset points
 * to a zeroed pool of @capacity elements of @elem_size bytes; NULL when
 * out of memory.  The peer is freed with free() after its pool.
 */
static inline void *bench_alloc_pooled(size_t size, size_t pool_offset, size_t capacity,
                                       size_t elem_size)
{
	char *peer = (char *)calloc(1, size);
	void *pool = calloc(capacity ? capacity : 1, elem_size);

	if (!peer || !pool) {
		free(peer);
		free(pool);
		return NULL;
	}
	memcpy(peer + pool_offset, &pool, sizeof(pool));
	return peer;
}

/* A 64-bit mixer (the finalizer of splitmix64): hash of a key for the hash peers. */
static inline unsigned long bench_hash(long key)
{
	unsigned long long x = (unsigned long long)key;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (unsigned long)x;
}

/* The largest batch workload 5 commits. */
#define BENCH_MAX_BATCH 64

/* Range peers hold [key, key + BENCH_RANGE_LEN); their keys are BENCH_RANGE_STRIDE apart. */
#define BENCH_RANGE_LEN    48
#define BENCH_RANGE_STRIDE 64

/* Every peer this build has, in table order; the first is the baseline. */
extern const struct bench_peer *const bench_peers[];
extern const size_t bench_peer_count;
/* Every range peer this build has (workload 4), in table order. */
extern const struct bench_peer *const bench_range_peers[];
extern const size_t bench_range_peer_count;
/* One line for each peer or workload this build lacks, and why; NULL-terminated. */
extern const char *const bench_missing[];

extern const struct bench_peer bench_peer_latch;
/* The latched map, which workload 4 measures beside the range map. */
extern const struct bench_peer bench_peer_latch_map;

#ifdef LATCH_BENCH_HAVE_DLFO
/* Loaded objects as [start, end) (at most @max), all of them known to _dl_find_object(). */
size_t bench_dlfo_objects(long (*ranges)[2], size_t max);
/* glibc's _dl_find_object(), and a latch range map holding bench_dlfo_objects(). */
extern const struct bench_peer bench_peer_dlfo, bench_peer_dlfo_latch;
#endif

#endif /* LATCH_BENCH_H */
