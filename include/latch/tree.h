/* SPDX-License-Identifier: MIT */
/*
 * latch/tree.h - the latched red-black tree.
 *
 * Every element embeds two tree nodes, one per copy of the tree; a latch
 * sequence counter (latch/seq.h) steers readers to the copy that is not
 * being modified.  Lookups therefore never wait and always finish, even
 * in a signal handler that interrupted the writer on the same thread, at
 * any instruction: the copy they read is then untouched, so they succeed
 * on their first attempt.
 *
 *	struct my_elem {
 *		uintptr_t key;              // immutable while in the tree
 *		struct latch_tree_node node;
 *	};
 *
 * Synchronization table:
 *
 *	call                     context                 serialize with
 *	latch_tree_find()        any, signal handlers    nothing
 *	latch_tree_find_floor()  any, signal handlers    nothing
 *	latch_tree_find_ceil()   any, signal handlers    nothing
 *	latch_tree_first/last()  any, signal handlers    nothing
 *	latch_tree_next/prev()   any, signal handlers    nothing
 *	latch_tree_empty()       any, signal handlers    nothing
 *	latch_tree_insert()      writer                  other writers
 *	latch_tree_erase()       writer                  other writers
 *	latch_tree_commit()      writer                  other writers
 *	latch_tree_replace()     writer                  other writers
 *	latch_tree_init()        before sharing          everything
 *
 * Element lifetime is the caller's: after latch_tree_erase() returns, a
 * reader may still be looking at the element, so it may be freed or
 * reused only after a grace period (every reader that could have seen it
 * has finished), e.g. liburcu's synchronize_rcu() or call_rcu().
 *
 * Keys are compared with two callbacks that must agree:
 * less(a, b) is true exactly when comp(key of a, b) < 0.  Equal keys are
 * allowed; all equal elements are kept and a lookup returns one of them.
 * Readers call comp() (and less(), in latch_tree_next/prev), so both must
 * be safe wherever lookups run: no locks, no waiting, async-signal-safe.
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_tree(3) and the pages it lists.
 */
#ifndef LATCH_TREE_H
#define LATCH_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <latch/rbtree.h>
#include <latch/seq.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Embed one in each element; contents are private. */
struct latch_tree_node {
	struct latch_rb_node node[2]; /* node[i] links the element into copy i */
};

/** A latched tree; all-zero (LATCH_TREE_ROOT_INIT) is an empty tree. */
struct latch_tree_root {
	struct latch_seq seq;
	struct latch_rb_root tree[2];
};

/** Static initialiser for an empty struct latch_tree_root. */
#define LATCH_TREE_ROOT_INIT                                                                       \
	{                                                                                          \
		LATCH_SEQ_INIT,                                                                    \
		{                                                                                  \
			LATCH_RB_ROOT_INIT, LATCH_RB_ROOT_INIT                                     \
		}                                                                                  \
	}

/** The element's key ordering; see the file comment. */
struct latch_tree_ops {
	/* true when a sorts before b (writer side, and latch_tree_next/prev) */
	bool (*less)(const struct latch_tree_node *a, const struct latch_tree_node *b);
	/* <0, 0, >0 as key sorts before, with, after n (reader side) */
	int (*comp)(const void *key, const struct latch_tree_node *n);
};

/**
 * latch_tree_entry() - the element (a @type) that embeds the node @ptr as
 * its member @member, like the kernel's container_of().  The result is
 * never const: on a pointer to a const node (as less() and comp() get)
 * that is a cast dropping const, which -Wcast-qual reports; use
 * latch_tree_entry_const() there.
 * Cost O(1).  Any context.
 */
#define latch_tree_entry(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/**
 * latch_tree_entry_const() - latch_tree_entry() for a pointer to a const
 * node: the element it gives is const too.
 * Cost O(1).  Any context.
 */
#define latch_tree_entry_const(ptr, type, member)                                                  \
	((const type *)(const void *)((const char *)(ptr)-offsetof(type, member)))

/**
 * latch_tree_init() - make @root an empty tree.
 * Cost O(1).  Must not race with any other call on @root.
 */
static inline void latch_tree_init(struct latch_tree_root *root)
{
	latch_seq_init(&root->seq);
	/* Relaxed: the tree is not shared yet. */
	LATCH_STORE_RELAXED(&root->tree[0].node, (struct latch_rb_node *)NULL);
	LATCH_STORE_RELAXED(&root->tree[1].node, (struct latch_rb_node *)NULL);
}

/**
 * latch_tree_insert() - add @node to the tree.
 *
 * The element's key must be set before the call and stay unchanged until
 * it is erased.  Readers see the element from the update's one flip on,
 * which sends them to the copy that already holds it.  Every build aborts,
 * naming the call, when @node is NULL.  @node must not be in the tree:
 * debug builds abort before any change if it is; in a release build
 * (NDEBUG) the tree is then corrupted.
 * Cost O(log n) per copy, no allocation.
 * Writer only: calls that change @root must be serialized by the caller.
 */
LATCH_API void latch_tree_insert(struct latch_tree_root *root, struct latch_tree_node *node,
                                 const struct latch_tree_ops *ops);

/**
 * latch_tree_erase() - remove @node, which must be in the tree.
 *
 * Readers stop finding the element from the update's one flip on.  It may be
 * reused or freed only after a grace period (see the file comment).
 * Every build aborts, naming the call, when @node is NULL.  @node must be
 * in the tree: debug builds abort before any change if it is not; in a
 * release build (NDEBUG) the tree is then corrupted.
 * Cost O(log n) per copy, no allocation.
 * Writer only: calls that change @root must be serialized by the caller.
 */
LATCH_API void latch_tree_erase(struct latch_tree_root *root, struct latch_tree_node *node,
                                const struct latch_tree_ops *ops);

/** What a change in a batch does to its element. */
enum latch_tree_op {
	LATCH_TREE_INSERT, /* add the element */
	LATCH_TREE_ERASE,  /* remove the element, which is in the tree */
};

/** One change of a batch (see latch_tree_commit()). */
struct latch_tree_change {
	enum latch_tree_op op;
	struct latch_tree_node *node;
};

/**
 * latch_tree_commit() - apply @n changes so that readers see all or none.
 *
 * The changes are made in order to the copy readers are not on, one flip
 * sends readers to it, then they are replayed onto the other copy: one
 * flip per batch, not per element, so a lookup sees the tree as it was
 * before the batch or as it is after it, never in between.
 * Each element may appear at most once in a batch; an insert's key must
 * be set before the call; an erased element may be freed or reused only
 * after a grace period.  Every build aborts, naming the call, before any
 * change when a change has no element or an unknown op (one compare
 * each).  Debug builds also abort before any change when an insert's
 * element is already in the tree, an erase's is not, or an element
 * appears twice (searches that cost O(n^2 + n log N), made in debug
 * builds only); in a release build (NDEBUG) such a batch corrupts the
 * tree.  While the batch is applied, debug builds also check that the two
 * copies keep the same shape, which only unserialized writers or links
 * changed outside the library can break; that check stops the program
 * with the tree half changed.
 * Cost O(n log N) per copy for N elements, no allocation.
 * Writer only: calls that change @root must be serialized by the caller.
 */
LATCH_API void latch_tree_commit(struct latch_tree_root *root,
                                 const struct latch_tree_change *changes, size_t n,
                                 const struct latch_tree_ops *ops);

/**
 * latch_tree_replace() - swap @old (in the tree) for @new_node (not in it).
 *
 * The two elements must compare equal.  A lookup of their key that runs
 * at any moment finds one or the other, never neither: the swap is a
 * batch (latch_tree_commit()) of one erase and one insert.  @old may be
 * freed or reused only after a grace period.  Every build aborts, naming
 * the call, before any change when an element is NULL, @old is @new_node
 * or the two do not compare equal.  Debug builds also abort before any
 * change when @old is not in the tree or @new_node is; in a release build
 * (NDEBUG) the tree is then corrupted.
 * Cost O(log N) per copy, no allocation.
 * Writer only: calls that change @root must be serialized by the caller.
 */
LATCH_API void latch_tree_replace(struct latch_tree_root *root, struct latch_tree_node *old,
                                  struct latch_tree_node *new_node,
                                  const struct latch_tree_ops *ops);

/* The descent and the read loop the lookups below share. */
#include <latch/detail/tree.h>

/**
 * latch_tree_find() - an element whose key compares equal to @key.
 *
 * Returns one of the equal elements, or NULL.  Never waits; retries only
 * when an update completed a flip while it was reading, and succeeds on
 * its first attempt when it interrupted the writer.
 * Cost O(log n) per attempt.  Any context, including signal handlers;
 * needs no serialization.  Inline so a constant @ops inlines comp().
 */
static inline struct latch_tree_node *latch_tree_find(const struct latch_tree_root *root,
                                                      const void *key,
                                                      const struct latch_tree_ops *ops)
{
	return latch_tree_seek_(root, latch_tree_order_key_, key, ops, LATCH_TREE_SEEK_EQUAL_);
}

/**
 * latch_tree_find_floor() - the greatest element whose key is <= @key.
 *
 * With equal keys it returns the in-order last of them (the one inserted
 * last).  NULL when every element is greater than @key.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_tree_node *latch_tree_find_floor(const struct latch_tree_root *root,
                                                            const void *key,
                                                            const struct latch_tree_ops *ops)
{
	return latch_tree_seek_(root, latch_tree_order_key_, key, ops, LATCH_TREE_SEEK_FLOOR_);
}

/**
 * latch_tree_find_ceil() - the least element whose key is >= @key.
 *
 * With equal keys it returns the in-order first of them (the one inserted
 * first).  NULL when every element is less than @key.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_tree_node *latch_tree_find_ceil(const struct latch_tree_root *root,
                                                           const void *key,
                                                           const struct latch_tree_ops *ops)
{
	return latch_tree_seek_(root, latch_tree_order_key_, key, ops, LATCH_TREE_SEEK_CEIL_);
}

/**
 * latch_tree_first() - the in-order first element, or NULL if empty.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_tree_node *latch_tree_first(const struct latch_tree_root *root)
{
	return latch_tree_seek_(root, latch_tree_order_leftmost_, NULL, NULL,
	                        LATCH_TREE_SEEK_CEIL_);
}

/**
 * latch_tree_last() - the in-order last element, or NULL if empty.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_tree_node *latch_tree_last(const struct latch_tree_root *root)
{
	return latch_tree_seek_(root, latch_tree_order_rightmost_, NULL, NULL,
	                        LATCH_TREE_SEEK_FLOOR_);
}

/**
 * latch_tree_next() - the first element whose key is greater than @node's.
 *
 * Steps by key (with less()), not by link, so @node need not be in the
 * tree any more: it may have been erased meanwhile, as long as its memory
 * is still valid (the caller's grace period).  Equal keys: the step goes
 * past every element equal to @node, to the in-order first element of the
 * next key, so a walk visits one element per distinct key (use
 * latch_tree_find_ceil() and the writer side to enumerate duplicates).
 * Iteration with latch_tree_first()/latch_tree_next() is weakly
 * consistent: each step is a separate lookup, so a walk visits every key
 * held by an element present throughout it (that very element when its
 * key is unique, maybe another of the same key otherwise), and elements
 * added or erased during it may or may not be seen.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_tree_node *latch_tree_next(const struct latch_tree_root *root,
                                                      const struct latch_tree_node *node,
                                                      const struct latch_tree_ops *ops)
{
	return latch_tree_seek_(root, latch_tree_order_after_, node, ops, LATCH_TREE_SEEK_CEIL_);
}

/**
 * latch_tree_prev() - the last element whose key is less than @node's.
 *
 * The mirror of latch_tree_next(): steps by key, weakly consistent, valid
 * after @node was erased; goes past every element equal to @node, to the
 * in-order last element of the previous key.
 * Cost O(log n) per attempt, never waits.  Any context, including signal
 * handlers; needs no serialization.
 */
static inline struct latch_tree_node *latch_tree_prev(const struct latch_tree_root *root,
                                                      const struct latch_tree_node *node,
                                                      const struct latch_tree_ops *ops)
{
	return latch_tree_seek_(root, latch_tree_order_before_, node, ops, LATCH_TREE_SEEK_FLOOR_);
}

/**
 * latch_tree_empty() - true when the tree holds no element.
 * Cost O(1).  Any context, including signal handlers.
 */
static inline bool latch_tree_empty(const struct latch_tree_root *root)
{
	return latch_tree_empty_(root);
}

#ifdef __cplusplus
}
#endif

#endif /* LATCH_TREE_H */
