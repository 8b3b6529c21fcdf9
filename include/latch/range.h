/* SPDX-License-Identifier: MIT */
/*
 * latch/range.h - an address-range map on the latched tree.
 *
 * Answers "which range holds this address?" (a module, a JIT code blob, a
 * mapping) from any context: lookups never wait and are right on their
 * first attempt even in a signal handler that interrupted the writer.
 *
 *	struct code_blob {
 *		struct latch_range range;   // [start, end), immutable while mapped
 *		const char *name;
 *	};
 *
 * Ranges are half-open, [start, end), and never overlap.  The map keeps,
 * per copy, the lowest start and the highest end, so latch_range_find()
 * rejects addresses outside every range without a descent.
 *
 * Synchronization table:
 *
 *	call                     context                 serialize with
 *	latch_range_find()       any, signal handlers    nothing
 *	latch_range_lower()      any, signal handlers    nothing
 *	latch_range_insert()     writer threads          nothing (the map locks)
 *	latch_range_erase()      writer threads          nothing (the map locks)
 *	latch_range_commit()     writer threads          nothing (the map locks)
 *	latch_range_map_init()   before sharing          everything
 *
 * The map serializes its writers with the mutex inside it; readers never
 * touch the mutex.  Writer calls therefore must not run in a signal
 * handler (the handler could interrupt the holder of the mutex).
 *
 * fork(): the child may use every map at once, lookups and writer calls
 * alike, even when another thread of the parent was inside a writer call
 * at the fork.  That call's batch is then, in the child, applied wholly
 * or not at all (lookups tell which); the child's first writer call on
 * each map restores the map's mutex and copies, at a cost of O(n) once.
 *
 * Range lifetime is the caller's: after latch_range_erase() (or a commit
 * that erases it) returns, a reader may still be looking at the range, so
 * it may be freed or reused only after a grace period, e.g. liburcu's
 * synchronize_rcu() or call_rcu() with readers inside rcu_read_lock()
 * (see examples/range-reclaim-urcu.c).  start and end must not change
 * while the range is in the map.
 */
#ifndef LATCH_RANGE_H
#define LATCH_RANGE_H

#include <pthread.h>
#include <stdint.h>

#include <latch/tree.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A range [start, end) to embed in the caller's element. */
struct latch_range {
	uintptr_t start, end; /* set before insertion, immutable while in the map */
	struct latch_tree_node node;
};

/** One change of a batch (see latch_range_commit()). */
struct latch_range_change {
	enum latch_tree_op op;
	struct latch_range *range;
};

/**
 * An address-range map.  A complete type so it can live on the stack or
 * in static storage; initialise with LATCH_RANGE_MAP_INIT or
 * latch_range_map_init().  Contents are private.
 */
struct latch_range_map {
	struct latch_tree_root tree; /* ranges ordered by start */
	/*
	 * Per copy i: low[i] is the lowest start, high[i] the highest end of
	 * the ranges in copy i (both 0 when it is empty).  The writer stores
	 * them together with copy i, between the same flips, so a reader
	 * reads them consistently with the copy it searches.
	 */
	uintptr_t low[2], high[2];
	pthread_mutex_t lock; /* serializes writers; readers never touch it */
	/* the fork generation @lock belongs to (fork(): see the file comment) */
	unsigned long generation;
};

/** Static initialiser for an empty struct latch_range_map. */
#define LATCH_RANGE_MAP_INIT                                                                       \
	{                                                                                          \
		LATCH_TREE_ROOT_INIT, { 0, 0 }, { 0, 0 }, PTHREAD_MUTEX_INITIALIZER, 0             \
	}

/**
 * latch_range_map_init() - make @m an empty map.
 * Cost O(1).  Must not race with any other call on @m.
 */
LATCH_API void latch_range_map_init(struct latch_range_map *m);

/**
 * latch_range_insert() - add @r to the map.
 *
 * Returns 0; -EINVAL when r->start >= r->end; -EEXIST when @r overlaps a
 * range in the map (or is in it already).  On error the map is unchanged.
 * Readers see @r from the moment the call returns at the latest.
 * Cost O(log n) per copy, no allocation.  Writer threads, not signal
 * handlers; the map serializes concurrent writers itself.
 */
LATCH_API int latch_range_insert(struct latch_range_map *m, struct latch_range *r);

/**
 * latch_range_erase() - remove @r from the map.
 *
 * Returns 0; -ENOENT when @r is not in the map; -EINVAL when @r is NULL.
 * On error the map is unchanged.  @r may be freed or reused only after a
 * grace period (file comment).
 * Cost O(log n) per copy, no allocation.  Writer threads, not signal
 * handlers; the map serializes concurrent writers itself.
 */
LATCH_API int latch_range_erase(struct latch_range_map *m, struct latch_range *r);

/**
 * latch_range_commit() - apply @n changes so that readers see all or none.
 *
 * Every check is made before the first change, in every build: returns
 * 0; -EINVAL when a change has no range or an unknown op, an insert has
 * start >= end, or the batch erases the same range twice; else -ENOENT
 * when an erase names a range not in the map; else -EEXIST when an insert
 * overlaps another insert of the batch or a range that stays in the map
 * (ranges the batch erases do not count: a batch may replace ranges by
 * overlapping ones), or is in the map already; -ENOMEM when a batch of
 * more than 16 changes cannot get its scratch array.  On error the map is
 * unchanged.  Erases are applied before inserts.
 * Cost O(n log n + n log N) for N ranges; allocates O(n) scratch memory
 * beyond 16 changes.  Writer threads, not signal handlers; the map
 * serializes concurrent writers itself.
 */
LATCH_API int latch_range_commit(struct latch_range_map *m,
                                 const struct latch_range_change *changes, size_t n);

/* The range embedding @n, or NULL. */
static inline struct latch_range *latch_range_of_(const struct latch_tree_node *n)
{
	return n ? latch_tree_entry_unconst_(n, struct latch_range, node) : NULL;
}

/* Order the address *@probe against a range's start (see latch_tree_seek_()). */
static inline int latch_range_order_(const void *probe, const struct latch_tree_node *n,
                                     const struct latch_tree_ops *ops)
{
	uintptr_t addr = *(const uintptr_t *)probe, start = latch_range_of_(n)->start;

	(void)ops;
	return (addr > start) - (addr < start);
}

/* Is the address *@probe within copy @idx's bounds?  Reader side. */
static inline bool latch_range_admit_(const void *gate, unsigned idx, const void *probe)
{
	const struct latch_range_map *m = (const struct latch_range_map *)gate;
	uintptr_t addr = *(const uintptr_t *)probe;

	/*
	 * Relaxed: the bounds of copy idx are stored between the same flips
	 * as copy idx's links, so the latch orders them exactly like the
	 * links: the acquire load of the count makes the stores before the
	 * last flip visible, and the retry check discards a read that saw a
	 * later store.
	 */
	return addr >= LATCH_LOAD_RELAXED(&m->low[idx]) && addr < LATCH_LOAD_RELAXED(&m->high[idx]);
}

/**
 * latch_range_find() - the range holding @addr, or NULL.
 *
 * Addresses below the lowest start or at or above the highest end are
 * rejected without a descent.  Never waits; right on its first attempt
 * when it interrupted the writer.
 * Cost O(1) outside the bounds, O(log n) per attempt inside.  Any context,
 * including signal handlers; needs no serialization.
 */
static inline struct latch_range *latch_range_find(const struct latch_range_map *m, uintptr_t addr)
{
	struct latch_range *r =
	    latch_range_of_(latch_tree_seek_(&m->tree, latch_range_order_, &addr, NULL,
	                                     LATCH_TREE_SEEK_FLOOR_, latch_range_admit_, m));

	/* end is immutable while @r can be seen, so no latch is needed for it. */
	return r && addr < r->end ? r : NULL;
}

/**
 * latch_range_lower() - the range with the greatest start <= @addr, or NULL.
 *
 * Unlike latch_range_find() it applies no bounds: an address past every
 * end gets the last range, an address in a gap the range before the gap.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_range *latch_range_lower(const struct latch_range_map *m, uintptr_t addr)
{
	return latch_range_of_(latch_tree_seek_(&m->tree, latch_range_order_, &addr, NULL,
	                                        LATCH_TREE_SEEK_FLOOR_, NULL, NULL));
}

#ifdef __cplusplus
}
#endif

#endif /* LATCH_RANGE_H */
