/* SPDX-License-Identifier: MIT */
/*
 * latch/map.h - an ordered map from 64-bit keys to pointers, latched.
 *
 * A B+-tree with 16 keys per node, kept in two full copies steered by a
 * latch sequence counter (latch/seq.h): lookups never wait and always
 * finish, even in a signal handler that interrupted the writer on the
 * same thread, at any instruction.  Keys are unique; values are opaque
 * pointers that the map stores and returns but never dereferences.
 *
 *	struct latch_map m;
 *	latch_map_init(&m);
 *	latch_map_insert(&m, 42, obj);
 *	void *v;
 *	if (latch_map_find(&m, 42, &v)) ...   // from any context
 *
 * Synchronization table:
 *
 *	call                        context                 serialize with
 *	latch_map_find()            any, signal handlers    nothing
 *	latch_map_find_many()       any, signal handlers    nothing
 *	latch_map_floor/ceil()      any, signal handlers    nothing
 *	latch_map_first/last()      any, signal handlers    nothing
 *	latch_map_next/prev()       any, signal handlers    nothing
 *	latch_map_size()            any, signal handlers    nothing
 *	latch_map_insert()          writer                  other writers
 *	latch_map_erase()           writer                  other writers
 *	latch_map_remove()          writer                  other writers
 *	latch_map_replace()         writer                  other writers
 *	latch_map_commit()          writer                  other writers
 *	latch_map_load_sorted()     writer                  other writers
 *	latch_map_reserve()         writer                  other writers
 *	latch_map_init()            before sharing          everything
 *	latch_map_destroy()         after every reader      everything
 *
 * Every update flips the counter once: it is made to the copy readers
 * are not using, readers are sent to that copy, and the same update is
 * made to the other copy.  A lookup sees the map as it was before an
 * update or as it is after it, never in between (a whole batch of
 * latch_map_commit() or latch_map_load_sorted() included).
 *
 * Node memory belongs to the map: nodes are allocated in chunks, reused
 * for nodes of the same kind, and released only by latch_map_destroy().
 * Writers allocate (with malloc-family calls), so writer calls must not
 * run in a signal handler; latch_map_reserve() lets a writer that cannot
 * allocate later allocate up front.  Every error leaves the map unchanged.
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_map(3), latch_map_find(3), latch_map_insert(3).
 */
#ifndef LATCH_MAP_H
#define LATCH_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <latch/detail/map.h>
#include <latch/visibility.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * An ordered latched map.  A complete type, so it can live on the stack
 * or in static storage; initialise it with latch_map_init().  Its
 * contents are private: opaque storage for the library's B+-tree core.
 */
struct latch_map {
	uintptr_t opaque_[LATCH_BTREE_CORE_WORDS_];
};

/**
 * latch_map_init() - make @m an empty map.
 * Returns 0 (or -ENOMEM; the current implementation allocates nothing
 * here).  Cost O(1).  Must not race with any other call on @m.
 */
LATCH_API int latch_map_init(struct latch_map *m);

/**
 * latch_map_destroy() - release every node of @m.
 * Values are not touched.  Call it only when no reader can be inside @m
 * any more.  Cost O(nodes).  Must not race with any other call on @m.
 */
LATCH_API void latch_map_destroy(struct latch_map *m);

/**
 * latch_map_reserve() - allocate now what @n entries need.
 *
 * Afterwards, as long as the map holds at most @n entries, no update
 * allocates (a batch of latch_map_commit() with more than 16 changes
 * still allocates its undo log).  Returns 0 or -ENOMEM (the map's
 * contents are unchanged either way).  Cost O(n).  Writer only,
 * serialized with other writers.
 */
LATCH_API int latch_map_reserve(struct latch_map *m, size_t n);

/**
 * latch_map_insert() - add @key with @value.
 * Returns 0, -EEXIST (the key is in the map) or -ENOMEM; on error the map
 * is unchanged.  Cost O(log n) per copy.  Writer only, serialized.
 */
LATCH_API int latch_map_insert(struct latch_map *m, uint64_t key, void *value);

/**
 * latch_map_erase() - remove @key.
 * Returns 0 or -ENOENT (the map is then unchanged).  Never allocates.
 * Cost O(log n) per copy.  Writer only, serialized.
 */
LATCH_API int latch_map_erase(struct latch_map *m, uint64_t key);

/**
 * latch_map_remove() - remove @key, and store its value in *@removed
 * (unless NULL).
 * latch_map_erase() that tells what it erased: the same single change,
 * whose one descent finds the entry.  Returns 0 or -ENOENT (the map is
 * then unchanged and *@removed untouched).  Never allocates.  Cost
 * O(log n) per copy.  Writer only, serialized.
 */
LATCH_API int latch_map_remove(struct latch_map *m, uint64_t key, void **removed);

/**
 * latch_map_replace() - give @key the value @value, atomically.
 * Readers see the old value or the new one.  Returns 0 or -ENOENT (the
 * map is then unchanged).  Never allocates.  Cost O(log n) per copy.
 * Writer only, serialized.
 */
LATCH_API int latch_map_replace(struct latch_map *m, uint64_t key, void *value);

/** What a change of a batch does. */
enum latch_map_op {
	LATCH_MAP_INSERT,  /* add key with value; the key must be absent */
	LATCH_MAP_ERASE,   /* remove key; the key must be present */
	LATCH_MAP_REPLACE, /* give key the value; the key must be present */
};

/** One change of a batch (see latch_map_commit()). */
struct latch_map_change {
	enum latch_map_op op;
	uint64_t key;
	void *value; /* ignored by LATCH_MAP_ERASE */
};

/**
 * latch_map_commit() - apply @n changes so that readers see all or none.
 *
 * The changes apply in order, each to the map as the ones before it left
 * it, so a batch may name a key more than once (insert then erase, erase
 * then insert, ...).  Each change is checked before it is made, on the
 * copy readers are not using, and a bad one undoes the ones made there
 * (readers never see them): returns 0; -EINVAL for an unknown op; -EEXIST
 * for an insert of a present key; -ENOENT for an erase or replace of an
 * absent key; and then sets *@failed (unless NULL) to the index of the
 * first bad change.  Returns -ENOMEM when memory runs out (*@failed is
 * then set to @n).  On error the map is unchanged.  Cost O(n log N) per
 * copy for N entries; a batch of more than 16 changes allocates its O(n)
 * undo log, and one of more than one change reserves nodes for its erases
 * too (an undone erase re-inserts).  Writer only, serialized.
 */
LATCH_API int latch_map_commit(struct latch_map *m, const struct latch_map_change *changes,
                               size_t n, size_t *failed);

/**
 * latch_map_load_sorted() - replace the whole contents by @n entries.
 *
 * @keys must be strictly increasing; @values may be NULL (every value is
 * then NULL).  Readers see the old contents or the new ones.  Builds
 * fully packed nodes.  Returns 0, -EINVAL (keys not strictly increasing,
 * or @keys NULL with @n > 0) or -ENOMEM; on error the map is unchanged.
 * Cost O(n + N) for N old entries.  Writer only, serialized.
 */
LATCH_API int latch_map_load_sorted(struct latch_map *m, const uint64_t *keys, void *const *values,
                                    size_t n);

/**
 * latch_map_find() - the value of @key.
 * Returns true and sets *@value (unless NULL) when @key is in the map.
 * Cost O(log n), never waits.  Any context, signal handlers included.
 */
LATCH_API bool latch_map_find(const struct latch_map *m, uint64_t key, void **value);

/**
 * latch_map_find_many() - the values of @n keys, from one state of the map.
 *
 * Sets found[i] for each keys[i] and, where found, values[i] (others are
 * left as they were); returns how many were found.  The descents are
 * interleaved (advanced level by level together, each prefetching the
 * node it goes to next), so a batch costs much less per key than as many
 * latch_map_find() calls.  All answers of a call with @n <= 64 come from
 * one state of the map (one snapshot); a longer call is answered in
 * consecutive groups of 64 keys, each from one state, the states in call
 * order.  @n == 0 is valid; the output arrays must not overlap @keys.
 * Uses about 2 KB of stack.  Cost O(n log N), never waits, right on its
 * first attempt when it interrupted the writer.  Any context, signal
 * handlers included.
 */
LATCH_API size_t latch_map_find_many(const struct latch_map *m, const uint64_t *keys, size_t n,
                                     void **values, bool *found);

/**
 * latch_map_floor() - the entry with the greatest key <= @key.
 * Returns false when there is none; otherwise sets *@found and *@value
 * (each unless NULL).  Cost O(log n), never waits.  Any context.
 */
LATCH_API bool latch_map_floor(const struct latch_map *m, uint64_t key, uint64_t *found,
                               void **value);

/**
 * latch_map_ceil() - the entry with the least key >= @key.
 * As latch_map_floor().  Cost O(log n), never waits.  Any context.
 */
LATCH_API bool latch_map_ceil(const struct latch_map *m, uint64_t key, uint64_t *found,
                              void **value);

/**
 * latch_map_first() - the entry with the least key.
 * Returns false when the map is empty.  Cost O(log n).  Any context.
 */
LATCH_API bool latch_map_first(const struct latch_map *m, uint64_t *found, void **value);

/**
 * latch_map_last() - the entry with the greatest key.
 * Returns false when the map is empty.  Cost O(log n).  Any context.
 */
LATCH_API bool latch_map_last(const struct latch_map *m, uint64_t *found, void **value);

/**
 * latch_map_next() - the entry with the least key > @key.
 * Each call is one lookup, so a walk by next() is weakly consistent: it
 * sees every key present throughout the walk, and none twice.
 * Cost O(log n).  Any context.
 */
LATCH_API bool latch_map_next(const struct latch_map *m, uint64_t key, uint64_t *found,
                              void **value);

/**
 * latch_map_prev() - the entry with the greatest key < @key.
 * As latch_map_next(), downwards.  Cost O(log n).  Any context.
 */
LATCH_API bool latch_map_prev(const struct latch_map *m, uint64_t key, uint64_t *found,
                              void **value);

/**
 * latch_map_size() - the number of entries.
 * Cost O(1), never waits.  Any context, signal handlers included.
 */
LATCH_API size_t latch_map_size(const struct latch_map *m);

#ifdef __cplusplus
}
#endif

#endif /* LATCH_MAP_H */
