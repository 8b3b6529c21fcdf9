/* SPDX-License-Identifier: MIT */
/*
 * The writer step every change to a latched tree is made of, shared by
 * the tree's own calls and by the structures built on it (the range map).
 */
#ifndef LATCH_SRC_COMMIT_H
#define LATCH_SRC_COMMIT_H

#include <latch/tree.h>

/*
 * Apply @changes in order to copy 0 while readers use copy 1, then to
 * copy 1 while readers use copy 0, so readers see all of them or none.
 * @after_copy (unless NULL) runs once each copy is changed, before
 * readers are sent to it, so that per-copy summaries change with their
 * copy.  Makes no checks but internal consistency checks in debug builds,
 * whose messages name @call, the public call the user made: the caller
 * has made the others.
 * Cost O(n log N) per copy.  Writer only, serialized by the caller.
 */
void latch_tree_commit_unchecked_(const char *call, struct latch_tree_root *root,
                                  const struct latch_tree_change *changes, size_t n,
                                  const struct latch_tree_ops *ops,
                                  void (*after_copy)(void *ctx, unsigned idx), void *ctx);

#endif /* LATCH_SRC_COMMIT_H */
