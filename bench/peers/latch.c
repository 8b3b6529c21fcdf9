/* SPDX-License-Identifier: MIT */
/*
 * latch: liblatch's latched RB-tree.  Lookups are latch_tree_find()
 * itself; the concurrent workloads' readers use latch_count_find(), the
 * same loop with a counter on its retry path, to report retries.
 */
#include "tree-peer.h"

static void latch_insert(void *peer, size_t slot, long key)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	latch_tree_insert(&p->root, tree_peer_node(p, slot, key), &test_elem_ops);
}

static void latch_erase(void *peer, size_t slot)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	latch_tree_erase(&p->root, &p->pool[slot].node, &test_elem_ops);
}

/* latch_tree_find(), adding the number of repeated attempts to *retries. */
static inline struct latch_tree_node *latch_count_find(const struct latch_tree_root *root, long key,
                                                       unsigned long *retries)
{
	unsigned start = latch_seq_read_begin(&root->seq);
	struct latch_tree_node *found;

	for (;;) {
		/* Constant indexes, as in latch_tree_seek_(). */
		found = start & 1u ? latch_tree_find_in_copy_(root, 1, &key, &test_elem_ops)
		                   : latch_tree_find_in_copy_(root, 0, &key, &test_elem_ops);
		if (!latch_seq_read_retry(&root->seq, start))
			return found;
		++*retries;
		start = latch_seq_read_begin(&root->seq);
	}
}

BENCH_FIND_MANY(latch_find_many, struct tree_peer, latch_tree_find(&p->root, &key, &test_elem_ops))
BENCH_FIND_MANY(latch_find_counted, struct tree_peer, latch_count_find(&p->root, key, &t->retries))

const struct bench_peer bench_peer_latch = {
	.name = "latch",
	.flags = BENCH_SHARED,
	.create = tree_peer_create,
	.destroy = tree_peer_destroy,
	.insert = latch_insert,
	.erase = latch_erase,
	.find_many = latch_find_many,
	.find_counted = latch_find_counted,
};

#ifdef LATCH_BENCH_HAVE_COMMIT
void bench_latch_commit(void *peer, const size_t *slots, size_t n, bool insert)
{
	struct tree_peer *p = (struct tree_peer *)peer;
	struct latch_tree_change changes[64];

	if (n > 64)
		abort(); /* the driver's batches are at most 64 */
	for (size_t i = 0; i < n; i++) {
		changes[i].op = insert ? LATCH_TREE_INSERT : LATCH_TREE_ERASE;
		changes[i].node = &p->pool[slots[i]].node;
	}
	latch_tree_commit(&p->root, changes, n, &test_elem_ops);
}
#endif
