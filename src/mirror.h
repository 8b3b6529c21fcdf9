/* SPDX-License-Identifier: MIT */
/*
 * Restoring a latched tree whose writer stopped for good in the middle of
 * an update (the child of a fork() taken while another thread wrote).
 */
#ifndef LATCH_SRC_MIRROR_H
#define LATCH_SRC_MIRROR_H

#include <latch/tree.h>

/*
 * Make the copy readers are not sent to an exact replica of the one they
 * are sent to, so the next update starts from two equal copies.  The copy readers use is
 * never half changed (the latch's own guarantee), so after this the tree
 * holds either everything an interrupted update did or nothing of it.
 * @after_copy (unless NULL) runs once the other copy is rebuilt, as in
 * latch_tree_commit_unchecked_().
 * Cost O(n).  Writer only: nothing else may change @root meanwhile;
 * readers may run, in any context.
 */
void latch_tree_mirror_(struct latch_tree_root *root, void (*after_copy)(void *ctx, unsigned idx),
                        void *ctx);

#endif /* LATCH_SRC_MIRROR_H */
