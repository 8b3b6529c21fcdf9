/* SPDX-License-Identifier: MIT */
/*
 * The classic seqlock over one tree: what the latch replaces.
 *
 * Writers make the count odd, modify the only copy, make it even again.
 * Readers wait while the count is odd and retry if it changed.  That
 * wait is the flaw: a reader in a signal handler that interrupted the
 * writer on its own thread spins forever, because the writer cannot run
 * until the handler returns.  The tests and the demo show exactly that.
 */
#ifndef LATCH_PEERS_SEQLOCK_TREE_H
#define LATCH_PEERS_SEQLOCK_TREE_H

#include "one-copy-tree.h"

struct seqlock_tree {
	unsigned seq;               /* odd while the writer modifies the tree */
	struct latch_tree_root one; /* only copy 0 is used */
};

#define SEQLOCK_TREE_INIT                                                                          \
	{                                                                                          \
		0, LATCH_TREE_ROOT_INIT                                                            \
	}

static inline void seqlock_tree_write_begin(struct seqlock_tree *t)
{
	/* Relaxed load: only the serialized writer stores the count. */
	LATCH_STORE_RELAXED(&t->seq, LATCH_LOAD_RELAXED(&t->seq) + 1u);
	/* Release fence: the odd count is ordered before the changes that follow. */
	LATCH_FENCE_RELEASE();
}

static inline void seqlock_tree_write_end(struct seqlock_tree *t)
{
	/* Release: the changes are visible to a reader that sees the even count. */
	LATCH_STORE_RELEASE(&t->seq, LATCH_LOAD_RELAXED(&t->seq) + 1u);
}

/* Writer only, serialized by the caller. */
static inline void seqlock_tree_insert(struct seqlock_tree *t, struct latch_tree_node *node,
                                       const struct latch_tree_ops *ops)
{
	seqlock_tree_write_begin(t);
	one_copy_insert(&t->one, node, ops);
	seqlock_tree_write_end(t);
}

/* Writer only, serialized by the caller. */
static inline void seqlock_tree_erase(struct seqlock_tree *t, struct latch_tree_node *node)
{
	seqlock_tree_write_begin(t);
	one_copy_erase(&t->one, node);
	seqlock_tree_write_end(t);
}

/* Any thread; spins while a write is in progress (never returns if it interrupted one). */
static inline struct latch_tree_node *
seqlock_tree_find(const struct seqlock_tree *t, const void *key, const struct latch_tree_ops *ops)
{
	struct latch_tree_node *found;
	unsigned start;

	do {
		/* Acquire: pairs with the release store in seqlock_tree_write_end(). */
		while ((start = LATCH_LOAD_ACQUIRE(&t->seq)) & 1u)
			; /* the wait the latch removes */
		found = one_copy_find(&t->one, key, ops);
		/* Acquire fence: the reads above are ordered before the re-check. */
		LATCH_FENCE_ACQUIRE();
	} while (LATCH_LOAD_RELAXED(&t->seq) != start);
	return found;
}

#endif /* LATCH_PEERS_SEQLOCK_TREE_H */
