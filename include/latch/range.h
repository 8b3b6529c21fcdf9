/* SPDX-License-Identifier: MIT */
/*
 * latch/range.h - an address-range map, latched.
 *
 * Answers "which range holds this address?" (a module, a JIT code blob, a
 * mapping, a symbol) from any context: lookups never wait and are right
 * on their first attempt even in a signal handler that interrupted the
 * writer on the same thread, at any instruction.
 *
 *	struct latch_range_map m;
 *	latch_range_map_init(&m);
 *	latch_range_insert(&m, 0x1000, 0x2000, blob, NULL);
 *	struct latch_range r;
 *	if (latch_range_find(&m, addr, &r)) ...   // r.value: from any context
 *
 * Ranges are half-open, [start, end), with start < end, and never
 * overlap (adjacent ranges are fine).  The map stores each range's start,
 * end and value in the leaves of a B+-tree kept in two full copies (the
 * tree of latch/map.h), so a lookup is one descent and a search inside
 * one leaf, and never touches the caller's memory: ranges are passed and
 * returned by value, and values are opaque pointers the map never
 * dereferences.
 *
 * Synchronization table:
 *
 *	call                        context                 serialize with
 *	latch_range_find()          any, signal handlers    nothing
 *	latch_range_find_many()     any, signal handlers    nothing
 *	latch_range_floor/ceil()    any, signal handlers    nothing
 *	latch_range_first/last()    any, signal handlers    nothing
 *	latch_range_next/prev()     any, signal handlers    nothing
 *	latch_range_size()          any, signal handlers    nothing
 *	latch_range_insert()        writer threads          nothing (the map locks)
 *	latch_range_erase()         writer threads          nothing (the map locks)
 *	latch_range_remove()        writer threads          nothing (the map locks)
 *	latch_range_erase_if()      writer threads          nothing (the map locks)
 *	latch_range_store()         writer threads          nothing (the map locks)
 *	latch_range_commit()        writer threads          nothing (the map locks)
 *	latch_range_load_sorted()   writer threads          nothing (the map locks)
 *	latch_range_reserve()       writer threads          nothing (the map locks)
 *	latch_range_map_init()      before sharing          everything
 *	latch_range_map_destroy()   after every reader      everything
 *
 * The map serializes its writers with a mutex inside it; readers never
 * touch the mutex.  Writer calls allocate (malloc family) and lock, so
 * they must not run in a signal handler.  Every error leaves the map
 * unchanged.
 *
 * fork(): the child may use every map at once, lookups and writer calls
 * alike, even when another thread of the parent was inside a writer call
 * at the fork.  That call's update is then, in the child, applied wholly
 * or not at all (lookups tell which); the child's first writer call on
 * each map restores the map's mutex and copies, at a cost of O(n log n)
 * once and O(n) scratch memory (so it may return -ENOMEM, an erase
 * included, leaving the map unchanged).
 *
 * What a value points to is the caller's: after a range is erased, a
 * reader may still hold its value, so the object may be freed only after
 * a grace period, e.g. liburcu's synchronize_rcu() or call_rcu() with
 * readers inside rcu_read_lock() (see examples/range-reclaim-urcu.c).
 *
 * Or the map holds the values itself: a map made with
 * latch_range_map_init_payload() keeps a payload of a fixed size (up to
 * LATCH_RANGE_PAYLOAD_MAX bytes) per range, copied in by
 * latch_range_insert_payload() and latch_range_store_payload() (removed by
 * erase, remove or latch_range_erase_if_payload()) and copied out by
 * latch_range_find_payload() inside the lookup's read section, so a
 * reader keeps a copy that nothing frees: no grace period, no registered
 * reader threads, and a payload slot is reused as soon as its range is
 * erased (latch_range_payload(3)).  On such a map the calls that take a
 * value (insert, store, erase_if, commit, load_sorted) return -EINVAL.
 *
 *	call                          context                 serialize with
 *	latch_range_find_payload()    any, signal handlers    nothing
 *	latch_range_payload_size()    any, signal handlers    nothing
 *	latch_range_insert_payload()  writer threads          nothing (the map locks)
 *	latch_range_store_payload()   writer threads          nothing (the map locks)
 *	latch_range_erase_if_payload() writer threads         nothing (the map locks)
 *	latch_range_map_init_payload() before sharing         everything
 *
 * A JIT's code map (examples/code-map.c): loads insert, unloads erase
 * with latch_range_erase_if() the record they inserted (so a late unload
 * cannot erase code that reused the addresses), and code placed over
 * addresses whose old code was never unloaded goes in with
 * latch_range_store(), which evicts what it overlaps in the same flip.
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_range(3), latch_range_find(3), latch_range_insert(3).
 */
#ifndef LATCH_RANGE_H
#define LATCH_RANGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <latch/detail/map.h>
#include <latch/visibility.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A range [start, end) and its value; passed and returned by value. */
struct latch_range {
	uintptr_t start, end;
	void *value;
};

/**
 * An address-range map.  A complete type so it can live on the stack or
 * in static storage; initialise it with latch_range_map_init().  Contents
 * are private.
 */
struct latch_range_map {
	/* the B+-tree core, keyed by start, leaves holding each end (opaque) */
	uintptr_t core_[LATCH_BTREE_CORE_WORDS_];
	pthread_mutex_t lock; /* serializes writers; readers never touch it */
	/* the fork generation @lock belongs to (fork(): see the file comment) */
	unsigned long generation;
	/* the payload slots of a map made with latch_range_map_init_payload() (opaque) */
	uintptr_t payload_[LATCH_RANGE_PAYLOAD_WORDS_];
};

/** The largest payload a range can hold, in bytes. */
#define LATCH_RANGE_PAYLOAD_MAX 256

/**
 * latch_range_map_init() - make @m an empty map.
 * Returns 0, or -ENOMEM when the writers' mutex cannot be created.
 * Cost O(1), allocates no node.  Must not race with any other call on @m.
 */
LATCH_API int latch_range_map_init(struct latch_range_map *m);

/**
 * latch_range_map_init_payload() - make @m an empty map whose ranges each
 * hold a payload of @payload_size bytes instead of a value.
 *
 * @payload_size must be a multiple of 8 from 8 to LATCH_RANGE_PAYLOAD_MAX.
 * Such a map takes ranges only from latch_range_insert_payload() and
 * latch_range_store_payload(), and is emptied by latch_range_erase() and
 * latch_range_remove(); its lookups report a NULL value, and
 * latch_range_find_payload() copies the payload out.  Returns 0; -EINVAL
 * for a bad size; -ENOMEM when the writers' mutex cannot be created.
 * Cost O(1), allocates nothing.  Must not race with any other call on @m.
 */
LATCH_API int latch_range_map_init_payload(struct latch_range_map *m, size_t payload_size);

/**
 * latch_range_map_destroy() - release every node of @m.
 * Values are not touched.  Call it only when no reader can be inside @m
 * any more.  Cost O(nodes).  Must not race with any other call on @m.
 */
LATCH_API void latch_range_map_destroy(struct latch_range_map *m);

/**
 * latch_range_reserve() - allocate now what @n ranges need.
 *
 * Afterwards, as long as the map holds at most @n ranges, no single
 * insert, erase or remove allocates, nor a store while the map holds
 * fewer than @n ranges (a batch of latch_range_commit() with more
 * than 16 changes still allocates its undo log, and a bulk load one
 * entry per 16 ranges).  Returns 0 or -ENOMEM (the contents are
 * unchanged either way).  Cost O(n).  Writer threads; the map serializes
 * writers itself.
 */
LATCH_API int latch_range_reserve(struct latch_range_map *m, size_t n);

/**
 * latch_range_insert() - add the range [@start, @end) with @value.
 *
 * Returns 0; -EINVAL when @start >= @end; -EEXIST when the range overlaps
 * one in the map, which is then copied to *@collision (unless NULL; the
 * one with the lowest start when several overlap); -ENOMEM.  On error the
 * map is unchanged.  Readers see the range from the moment the call
 * returns at the latest.  Cost O(log n) per copy.  Writer threads, not
 * signal handlers; the map serializes concurrent writers itself.
 */
LATCH_API int latch_range_insert(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                                 void *value, struct latch_range *collision);

/**
 * latch_range_erase() - remove the range that starts at @start.
 *
 * Returns 0 or -ENOENT (no range starts at @start; the map is then
 * unchanged).  Never allocates (but the first writer call in a fork()
 * child may: file comment).  A reader may still hold the range's
 * value after the call (file comment).  Cost O(log n) per copy.  Writer
 * threads, not signal handlers; the map serializes writers itself.
 */
LATCH_API int latch_range_erase(struct latch_range_map *m, uintptr_t start);

/**
 * latch_range_remove() - remove the range that starts at @start, and
 * copy it to *@removed (unless NULL).
 *
 * latch_range_erase() that tells what it erased: the same single change,
 * whose one descent finds the range at its spot.  Returns 0 or -ENOENT
 * (no range starts at @start; the map is then unchanged and *@removed
 * untouched).  Never allocates (but the first writer call in a fork()
 * child may: file comment).  A reader may still hold the range's value
 * after the call (file comment).  Cost O(log n) per copy.  Writer
 * threads, not signal handlers; the map serializes writers itself.
 */
LATCH_API int latch_range_remove(struct latch_range_map *m, uintptr_t start,
                                 struct latch_range *removed);

/**
 * latch_range_erase_if() - remove the range that starts at
 * @expected->start only if it is still exactly *@expected.
 *
 * For an owner that inserted a range and wants its own record gone but
 * not a range that replaced it meanwhile (latch_range_store(), or an
 * erase and an insert at the same start).  Returns 0; -ENOENT when no
 * range starts at @expected->start; -ESTALE when one does but its end or
 * value differs from *@expected.  On error the map is unchanged.  Never
 * allocates (but see fork() in the file comment).  Cost O(log n) per
 * copy.  Writer threads, not signal handlers; the map serializes writers
 * itself, and the comparison and the erase are one step under its lock.
 */
LATCH_API int latch_range_erase_if(struct latch_range_map *m, const struct latch_range *expected);

/**
 * latch_range_store() - add [@start, @end) with @value, evicting every
 * range it overlaps, so that readers see the old ranges or the new one
 * and never a gap between them.
 *
 * Copies the evicted ranges, in start order, to @evicted[0..] and sets
 * *@n_evicted (unless NULL) to how many were evicted.  When more than
 * @max_evicted ranges overlap, nothing changes: it returns -ENOSPC with
 * *@n_evicted set to how many overlap (and the first @max_evicted of them
 * copied to @evicted), so a second call with that much room does it.
 * @evicted may be NULL when @max_evicted is 0 (a NULL @evicted has room
 * for none).  Returns 0; -ENOSPC; -EINVAL when @start >= @end; -ENOMEM.
 * On an error other than -ENOSPC *@n_evicted is 0; on every error the map
 * is unchanged.  Cost: one descent of both copies side by side, as an
 * insert, when it evicts nothing; for k evictions O((k + 1) log n) per
 * copy (the overlapping ranges are counted first, on the copy readers are
 * not using, then erased one at a time and the new range inserted, all
 * before the one flip).  Allocates only the nodes an insert can need.
 * Writer threads, not signal handlers; the map serializes writers itself.
 */
LATCH_API int latch_range_store(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                                void *value, struct latch_range *evicted, size_t max_evicted,
                                size_t *n_evicted);

/**
 * latch_range_insert_payload() - add the range [@start, @end) holding a
 * copy of the latch_range_payload_size() bytes at @payload.
 *
 * latch_range_insert() for a map made with latch_range_map_init_payload():
 * the payload is copied into a free slot of the map before readers can
 * see the range.  Returns 0; -EINVAL when @start >= @end, @payload is
 * NULL or the map holds no payloads; -EEXIST as latch_range_insert()
 * (*@collision's value is NULL); -ENOMEM.  On error the map is unchanged.
 * Cost O(log n) per copy, plus the copy of the payload.  Writer threads,
 * not signal handlers; the map serializes writers itself.
 */
LATCH_API int latch_range_insert_payload(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                                         const void *payload, struct latch_range *collision);

/**
 * latch_range_erase_if_payload() - latch_range_erase_if() for a map made
 * with latch_range_map_init_payload(): remove the range that starts at
 * @start only if it still ends at @end and holds the payload at @payload
 * (compared byte for byte).
 *
 * Returns 0; -ENOENT when no range starts at @start; -ESTALE when one
 * does but its end or payload differs; -EINVAL when @payload is NULL or
 * the map holds no payloads.  On error the map is unchanged.  Never
 * allocates (but see fork() in the file comment).  The slot is free for
 * reuse when it returns.  Cost O(log n) per copy, plus the comparison.
 * Writer threads, not signal handlers; the map serializes writers itself,
 * and the comparison and the erase are one step under its lock.
 */
LATCH_API int latch_range_erase_if_payload(struct latch_range_map *m, uintptr_t start,
                                           uintptr_t end, const void *payload);

/**
 * latch_range_store_payload() - latch_range_store() for a map made with
 * latch_range_map_init_payload(): add [@start, @end) holding a copy of
 * @payload, evicting every range it overlaps in the same flip.
 *
 * Reports the evicted ranges (their values NULL) and fails as
 * latch_range_store() does, and with -EINVAL when @payload is NULL or the
 * map holds no payloads.  The evicted ranges' slots are free for reuse
 * when it returns.  On error the map is unchanged.  Cost that of
 * latch_range_store(), plus the copy of the payload.  Writer threads, not
 * signal handlers; the map serializes writers itself.
 */
LATCH_API int latch_range_store_payload(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                                        const void *payload, struct latch_range *evicted,
                                        size_t max_evicted, size_t *n_evicted);

/** What a change of a batch does. */
enum latch_range_op {
	LATCH_RANGE_INSERT,   /* add range; it must overlap no range in the map */
	LATCH_RANGE_ERASE,    /* remove the range starting at range.start */
	LATCH_RANGE_ERASE_IF, /* remove the range starting at range.start if it is still range */
	LATCH_RANGE_STORE,    /* add range, evicting the ranges it overlaps (not reported) */
};

/** One change of a batch (see latch_range_commit()). */
struct latch_range_change {
	enum latch_range_op op;
	struct latch_range range; /* an erase uses range.start only */
};

/**
 * latch_range_commit() - apply @n changes so that readers see all or none.
 *
 * The changes apply in order, each to the map as the ones before it left
 * it, so a batch may erase a range and insert an overlapping one in its
 * place, or insert a range and erase it again; inserts, erases,
 * conditional erases and stores mix freely.  A store's evictions are not
 * reported.  Returns 0; else the error of the first bad change, and sets
 * *@failed (unless NULL) to its index: -EINVAL for an unknown op or an
 * insert or store with start >= end, -EEXIST for an insert that overlaps
 * a range, -ENOENT for an erase or conditional erase where no range
 * starts, -ESTALE for a conditional erase of a range whose end or value
 * differs.  Returns -ENOMEM when memory runs out (*@failed is then @n).
 * On error the map is unchanged (its contents; a failed batch may leave
 * the copies' nodes shaped differently).  Cost O((n + e) log N) per copy
 * for N ranges and e evictions; a batch of more than 16 changes allocates
 * its O(n) undo log, and one whose stores evict more than its log holds
 * (one entry per change and per eviction) a larger one; a batch of more
 * than one change reserves nodes for its erases and evictions too (an
 * undone erase or eviction re-inserts), each store's as the batch reaches
 * it.  Writer threads, not signal handlers; the map serializes writers
 * itself.
 */
LATCH_API int latch_range_commit(struct latch_range_map *m,
                                 const struct latch_range_change *changes, size_t n,
                                 size_t *failed);

/**
 * latch_range_load_sorted() - replace the whole contents by @n ranges.
 *
 * @ranges must be sorted by start and must not overlap.  Readers see the
 * old contents or the new ones.  Builds fully packed nodes; @n == 0
 * empties the map.  Returns 0; -EINVAL for a range with start >= end or
 * a start below the one before it; -EEXIST for a range that overlaps the
 * one before it (equal starts included); in both cases *@failed (unless
 * NULL) is set to its index.  Returns -ENOMEM (*@failed = @n) when memory
 * runs out.  On error the map is unchanged.  Cost O(n + N) for N old
 * ranges.  Writer threads, not signal handlers; the map serializes
 * writers itself.
 */
LATCH_API int latch_range_load_sorted(struct latch_range_map *m, const struct latch_range *ranges,
                                      size_t n, size_t *failed);

/**
 * latch_range_find() - the range that holds @addr.
 *
 * Returns true and copies it to *@out (unless NULL) when a range of the
 * map holds @addr.  One descent and a search inside one leaf; never
 * waits, right on its first attempt when it interrupted the writer.
 * Cost O(log n).  Any context, signal handlers included.
 */
LATCH_API bool latch_range_find(const struct latch_range_map *m, uintptr_t addr,
                                struct latch_range *out);

/**
 * latch_range_find_payload() - the range that holds @addr, and a copy of
 * its payload.
 *
 * latch_range_find() that also copies the range's payload to @payload
 * (latch_range_payload_size() bytes; unless NULL; nothing on a map
 * without payloads), read in the same attempt as the range, so the copy
 * is the whole payload the range held at one moment of the call.  The
 * copy is the caller's to keep: the map may reuse the slot it came from
 * as soon as the range is erased, without waiting for readers.  Returns
 * false when no range holds @addr, leaving *@out as it was (the bytes at
 * @payload are then unspecified: an attempt the writer's flip discarded
 * may have copied into them).  Never waits, right on its first attempt when it interrupted
 * the writer.  Cost O(log n) plus the copy.  Any context, signal
 * handlers included.
 */
LATCH_API bool latch_range_find_payload(const struct latch_range_map *m, uintptr_t addr,
                                        struct latch_range *out, void *payload);

/**
 * latch_range_payload_size() - the bytes of each range's payload: the
 * size given to latch_range_map_init_payload(), or 0 for a map made with
 * latch_range_map_init().  Cost O(1).  Any context, signal handlers
 * included.
 */
LATCH_API size_t latch_range_payload_size(const struct latch_range_map *m);

/**
 * latch_range_find_many() - the ranges that hold @n addresses, from one
 * state of the map.
 *
 * Sets found[i] for each addrs[i] and, where a range holds it, out[i]
 * (others are left as they were); returns how many were found.  The
 * descents are interleaved (advanced level by level together, each
 * prefetching the node it goes to next), so a batch costs much less per
 * address than as many latch_range_find() calls.  All answers of a call
 * with @n <= 64 come from one state of the map (one snapshot); a longer
 * call is answered in consecutive groups of 64 addresses, each from one
 * state, the states in call order.  @n == 0 is valid; the output arrays
 * must not overlap @addrs.  Uses about 2.5 KB of stack.  Cost
 * O(n log N), never waits, right on its first attempt when it interrupted
 * the writer.  Any context, signal handlers included.
 */
LATCH_API size_t latch_range_find_many(const struct latch_range_map *m, const uintptr_t *addrs,
                                       size_t n, struct latch_range *out, bool *found);

/**
 * latch_range_floor() - the range with the greatest start <= @addr.
 *
 * Unlike latch_range_find() it does not require @addr inside the range:
 * an address in a gap gets the range before the gap.  Returns false when
 * every range starts above @addr.  Cost O(log n), never waits.  Any
 * context, signal handlers included.
 */
LATCH_API bool latch_range_floor(const struct latch_range_map *m, uintptr_t addr,
                                 struct latch_range *out);

/**
 * latch_range_ceil() - the range with the least start >= @addr.
 * Returns false when there is none.  Cost O(log n), never waits.  Any
 * context, signal handlers included.
 */
LATCH_API bool latch_range_ceil(const struct latch_range_map *m, uintptr_t addr,
                                struct latch_range *out);

/**
 * latch_range_first() - the range with the least start.
 * Returns false when the map is empty.  Cost O(log n), never waits.  Any
 * context, signal handlers included.
 */
LATCH_API bool latch_range_first(const struct latch_range_map *m, struct latch_range *out);

/**
 * latch_range_last() - the range with the greatest start.
 * Returns false when the map is empty.  Cost O(log n), never waits.  Any
 * context, signal handlers included.
 */
LATCH_API bool latch_range_last(const struct latch_range_map *m, struct latch_range *out);

/**
 * latch_range_next() - the range with the least start > @start.
 *
 * Each call is one lookup, so a walk by first() and next() is weakly
 * consistent: it sees every range present throughout the walk, in order,
 * none twice.  Cost O(log n), never waits.  Any context, signal handlers
 * included.
 */
LATCH_API bool latch_range_next(const struct latch_range_map *m, uintptr_t start,
                                struct latch_range *out);

/**
 * latch_range_prev() - the range with the greatest start < @start.
 * As latch_range_next(), downwards: a walk by last() and prev() sees the
 * ranges in reverse order.  Cost O(log n), never waits.  Any context,
 * signal handlers included.
 */
LATCH_API bool latch_range_prev(const struct latch_range_map *m, uintptr_t start,
                                struct latch_range *out);

/**
 * latch_range_size() - the number of ranges.
 * Cost O(1), never waits.  Any context, signal handlers included.
 */
LATCH_API size_t latch_range_size(const struct latch_range_map *m);

#ifdef __cplusplus
}
#endif

#endif /* LATCH_RANGE_H */
