/* SPDX-License-Identifier: MIT */
/* mutex: the same RB-tree, one copy, under a pthread_mutex_t. */
#include "tree-peer.h"

LOCKED_TREE_PEER(bench_peer_mutex, "mutex", mutex, pthread_mutex_lock, pthread_mutex_lock,
                 pthread_mutex_unlock, &test_elem_ops);
