/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (c): tree descents racing an erase that rebalances and an
 * insert that rotates, through the library's own latch_tree_erase(),
 * latch_tree_insert() and latch_tree_find(), on the tree of model-tree.h.
 *
 * The writer erases 10 (a black leaf: the root rotates down to the left),
 * then sets the key of a new element 22 and inserts it (it lands as the
 * inner grandchild of a red parent: two rotations, the first of which
 * stores the link that lifts 22 right after it was linked):
 *
 *	      20                      30                    30
 *	     /  \                    /  \                  /  \
 *	   10    30       -->      20    40      -->     22    40
 *	        /  \                 \                  /  \
 *	      25r   40r              25r              20r   25r
 *
 * The reader looks up keys, each checked against the oracle of model.h: elements present throughout (20, 25, 30, 40, each moved
 * by a rotation) are found; 10 is found before the erase's flip and not
 * after it; 22 after the insert's flip and not before; 15, never present,
 * is never found.  GenMC also reports any data race: a reader that
 * reaches 22 must be synchronized with the writer's store of its key.
 *
 * A reader that starts before the erase's flip can still be on its copy
 * when the insert changes that copy first: only the release stores of
 * the links to 22 (not the flip's release fence, which came before the
 * key was stored) then order the key before the reader's loads.
 */
#include "model-tree.h"

static struct elem e22;

static void *writer(void *arg)
{
	(void)arg;
	latch_tree_erase(&tree, &e10.node, &elem_ops);
	e22.key = 22; /* plain: set before the insert, after the erase's flip */
	latch_tree_insert(&tree, &e22.node, &elem_ops);
	return NULL;
}

static const struct elem *const c10[] = { &e10 }, *const c22[] = { &e22 }, *const c25[] = { &e25 },
                                *const c40[] = { &e40 }, *const c15[1];

/*
 * One reader: its first lookup has no synchronization from an earlier
 * one, so 40 (lost by a reader of a half-done rotation of the erase) and
 * 22 (new) come first.  Every further reader multiplies the executions
 * without adding a check (readers store nothing a reader loads).
 */
static void *reader(void *arg)
{
	(void)arg;
	model_find(40, c40, 1);
	model_find(22, c22, 1);
	model_find(25, c25, 1);
	model_find(10, c10, 1);
	model_find(15, c15, 0);
	return NULL;
}

int main(void)
{
	pthread_t r, w;

	model_tree_start();
	e10.life.until = MODEL_START + 1; /* erased by the first update */
	e22.life.from = MODEL_START + 2;  /* inserted by the second */
	e22.life.until = MODEL_NEVER;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	return 0;
}
