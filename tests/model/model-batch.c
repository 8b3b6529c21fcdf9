/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (d): a batch.  latch_tree_commit() promises that a lookup
 * sees the tree as it was before the batch or as it is after it, never in
 * between (include/latch/tree.h): one flip for the whole batch.
 *
 * On the tree of model-tree.h the writer commits one batch of three
 * changes, in this order: erase 10 (the root rotates down to the left),
 * erase 25, insert 25' (a new element with the key 25, its key set by the
 * writer just before the commit).  Between the second and the third
 * change, the copy being changed holds no element with the key 25; before
 * the batch 25 is found, after it 25'.
 *
 *	      20                      30                    30
 *	     /  \                    /  \                  /  \
 *	   10    30     erase 10   20    40   erase 25   20    40
 *	        /  \      -->        \         insert 25'  \
 *	      25r   40r              25r          -->      25'r
 *
 * The reader looks up 25, 10 and 40, each checked against the oracle of
 * model.h: a lookup of 25 always finds 25 or 25' (never neither), 25 only
 * before the flip and 25' only after it; 10 is found before the flip and
 * not after; 40 (moved by the rotation) always.  GenMC also reports any
 * data race on 25''s key.
 */
#include "model-tree.h"

static struct elem e22, e25b; /* e25b is 25' */

static void *writer(void *arg)
{
	struct latch_tree_change first[3] = { { LATCH_TREE_ERASE, &e10.node },
		                              { LATCH_TREE_ERASE, &e25.node },
		                              { LATCH_TREE_INSERT, &e25b.node } };
	struct latch_tree_change second[2] = { { LATCH_TREE_INSERT, &e22.node },
		                               { LATCH_TREE_ERASE, &e40.node } };

	(void)arg;
	e25b.key = 25; /* plain: set before the commit, as the contract asks */
	latch_tree_commit(&tree, first, 3, &elem_ops);
	e22.key = 22; /* after the first batch's flip */
	latch_tree_commit(&tree, second, 2, &elem_ops);
	return NULL;
}

static const struct elem *const c10[] = { &e10 }, *const c22[] = { &e22 },
                                *const c25[] = { &e25, &e25b }, *const c30[] = { &e30 },
                                *const c40[] = { &e40 };

static void *reader(void *arg)
{
	(void)arg;
	model_find(25, c25, 2);
	model_find(22, c22, 1);
	model_find(10, c10, 1);
	model_find(30, c30, 1);
	model_find(40, c40, 1);
	return NULL;
}

int main(void)
{
	pthread_t r, w;

	model_tree_start();
	/* One flip per batch: MODEL_START + 1 after the first, + 2 after the second. */
	e10.life.until = MODEL_START + 1;
	e25.life.until = MODEL_START + 1;
	e25b.life.from = MODEL_START + 1;
	e25b.life.until = MODEL_NEVER;
	e22.life.from = MODEL_START + 2;
	e22.life.until = MODEL_NEVER;
	e40.life.until = MODEL_START + 2;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	return 0;
}
