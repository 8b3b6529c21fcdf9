/* SPDX-License-Identifier: MIT */
/* rwlock: the same RB-tree, one copy, under a pthread_rwlock_t. */
#include "tree-peer.h"

LOCKED_TREE_PEER(bench_peer_rwlock, "rwlock", rwlock, pthread_rwlock_wrlock, pthread_rwlock_rdlock,
                 pthread_rwlock_unlock, &test_elem_ops);
