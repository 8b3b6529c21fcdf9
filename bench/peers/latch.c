/* SPDX-License-Identifier: MIT */
/*
 * latch: liblatch's latched RB-tree.  Lookups are latch_tree_find()
 * itself; the concurrent workloads' readers use latch_count_find(), the
 * same loop with a counter of attempts, to report retries.
 *
 * latch-2flip: the same tree and readers with the kernel's two-flip
 * writer (flip, change copy, flip, replay onto the other copy), built
 * from the library's own per-copy step, so that latchbench compares the
 * two write protocols side by side in one run.
 */
#include "tree-private.h"
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
	struct latch_tree_node *found = NULL;
	unsigned long attempts = 0;

	/* Constant copy indexes, as in latch_tree_seek_(). */
	LATCH_SEQ_READ_(&root->seq, idx)
	{
		attempts++;
		found = idx ? latch_tree_find_in_copy_(root, 1, &key, &test_elem_ops)
		            : latch_tree_find_in_copy_(root, 0, &key, &test_elem_ops);
	}
	*retries += attempts - 1;
	return found;
}

/* One latch_tree_commit() inserting (or erasing) @slots. */
static void latch_commit(void *peer, const size_t *slots, size_t n, bool insert)
{
	struct tree_peer *p = (struct tree_peer *)peer;
	struct latch_tree_change changes[BENCH_MAX_BATCH];

	if (n > BENCH_MAX_BATCH)
		abort(); /* a driver error */
	for (size_t i = 0; i < n; i++) {
		changes[i].op = insert ? LATCH_TREE_INSERT : LATCH_TREE_ERASE;
		changes[i].node = &p->pool[slots[i]].node;
	}
	latch_tree_commit(&p->root, changes, n, &test_elem_ops);
}

BENCH_FIND_MANY(latch_find_many, struct tree_peer, latch_tree_find(&p->root, &key, &test_elem_ops))
BENCH_FIND_MANY(latch_floor_many, struct tree_peer,
                latch_tree_find_floor(&p->root, &key, &test_elem_ops))
BENCH_FIND_MANY(latch_find_counted, struct tree_peer, latch_count_find(&p->root, key, &t->retries))

const struct bench_peer bench_peer_latch = {
	.name = "latch",
	.flags = BENCH_SHARED,
	.create = tree_peer_create,
	.destroy = tree_peer_destroy,
	.insert = latch_insert,
	.erase = latch_erase,
	.find_many = latch_find_many,
	.floor_many = latch_floor_many,
	.commit = latch_commit,
	.find_counted = latch_find_counted,
};

/*
 * The two-flip writer: each flip sends readers away from the copy it then
 * changes, the first copy decides, the second replays, as the library's
 * writer did before it flipped once.
 */
static void latch_2flip_change(struct tree_peer *p, enum latch_tree_op op,
                               struct latch_tree_node *node)
{
	const struct latch_tree_change change = { op, node };
	unsigned idx = latch_seq_write_flip(&p->root.seq);

	latch_tree_apply_copy_("latchbench", &p->root, &change, 1, idx, false, &test_elem_ops);
	idx = latch_seq_write_flip(&p->root.seq);
	latch_tree_apply_copy_("latchbench", &p->root, &change, 1, idx, true, &test_elem_ops);
}

static void latch_2flip_insert(void *peer, size_t slot, long key)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	latch_2flip_change(p, LATCH_TREE_INSERT, tree_peer_node(p, slot, key));
}

static void latch_2flip_erase(void *peer, size_t slot)
{
	struct tree_peer *p = (struct tree_peer *)peer;

	latch_2flip_change(p, LATCH_TREE_ERASE, &p->pool[slot].node);
}

const struct bench_peer bench_peer_latch_2flip = {
	.name = "latch-2flip",
	.flags = BENCH_SHARED,
	.create = tree_peer_create,
	.destroy = tree_peer_destroy,
	.insert = latch_2flip_insert,
	.erase = latch_2flip_erase,
	.find_many = latch_find_many,
	.find_counted = latch_find_counted,
};
