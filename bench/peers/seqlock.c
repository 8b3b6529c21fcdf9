/* SPDX-License-Identifier: MIT */
/* seqlock: the same RB-tree, one copy, under a classic seqlock. */
#include "tree-peer.h"

static void seqlock_insert(void *peer, size_t slot, long key)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	seqlock_tree_insert(&p->seqlock, tree_peer_node(p, slot, key), &test_elem_ops);
}

static void seqlock_erase(void *peer, size_t slot)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	seqlock_tree_erase(&p->seqlock, &p->pool[slot].node);
}

BENCH_FIND_MANY(seqlock_find_many, struct tree_peer,
                seqlock_tree_find(&p->seqlock, &key, &test_elem_ops))

TREE_PEER(bench_peer_seqlock, "seqlock", BENCH_SHARED, seqlock_insert, seqlock_erase,
          seqlock_find_many);
