/* SPDX-License-Identifier: MIT */
/* rwlock (ranges): the project's RB-tree of [start, end) ranges, one copy,
 * under a pthread_rwlock_t; a lookup descends to the range holding the
 * address (ranges never overlap, so "holds" is a valid comparison). */
#include "tree-peer.h"

static int range_comp(const void *key, const struct latch_tree_node *n)
{
	long addr = *(const long *)key, start = test_elem_of(n)->key;

	return addr < start ? -1 : addr >= start + BENCH_RANGE_LEN;
}

static const struct latch_tree_ops range_ops = { .less = test_elem_less, .comp = range_comp };

LOCKED_TREE_PEER(bench_range_peer_rwlock, "rwlock", rwlock, pthread_rwlock_wrlock,
                 pthread_rwlock_rdlock, pthread_rwlock_unlock, &range_ops);
