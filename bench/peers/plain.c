/* SPDX-License-Identifier: MIT */
/* plain: the project's RB-tree with no synchronization, the speed limit
 * for lookups (single thread only). */
#include "tree-peer.h"

static void plain_insert(void *peer, size_t slot, long key)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	one_copy_insert(&p->root, tree_peer_node(p, slot, key), &test_elem_ops);
}

static void plain_erase(void *peer, size_t slot)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	one_copy_erase(&p->root, &p->pool[slot].node);
}

BENCH_FIND_MANY(plain_find_many, struct tree_peer, one_copy_find(&p->root, &key, &test_elem_ops))

TREE_PEER(bench_peer_plain, "plain", 0, plain_insert, plain_erase, plain_find_many);
