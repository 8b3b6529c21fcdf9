/* SPDX-License-Identifier: MIT */
/*
 * batches: change several elements so that readers see all of the change
 * or none of it.  A routing table moves to a new set of routes at once; a
 * route is replaced in place; two mapped ranges are merged into one.
 */
#include <stdio.h>

#include <latch/range.h>
#include <latch/tree.h>

struct route {
	long prefix; /* the key */
	int via;
	struct latch_tree_node node;
};

static int route_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, p = latch_tree_entry(n, struct route, node)->prefix;

	return (k > p) - (k < p);
}

/* less() must agree with comp(): derive it from comp(). */
static bool route_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return route_comp(&latch_tree_entry(a, struct route, node)->prefix, b) < 0;
}

static const struct latch_tree_ops route_ops = { route_less, route_comp };
static struct latch_tree_root table = LATCH_TREE_ROOT_INIT;

static int via(long prefix)
{
	struct latch_tree_node *n = latch_tree_find(&table, &prefix, &route_ops);

	return n ? latch_tree_entry(n, struct route, node)->via : -1;
}

int main(void)
{
	static struct route old_routes[3] = { { .prefix = 1, .via = 100 },
		                              { .prefix = 2, .via = 100 },
		                              { .prefix = 3, .via = 100 } };
	static struct route new_routes[3] = { { .prefix = 1, .via = 200 },
		                              { .prefix = 2, .via = 200 },
		                              { .prefix = 4, .via = 200 } };
	static struct route fixed = { .prefix = 2, .via = 300 };
	struct latch_tree_change move[6];
	struct latch_range_map map;
	const struct latch_range_change merge[3] = {
		{ LATCH_RANGE_ERASE, { 0x1000, 0, NULL } },
		{ LATCH_RANGE_ERASE, { 0x2000, 0, NULL } },
		{ LATCH_RANGE_INSERT, { 0x1000, 0x3000, "merged" } },
	};
	struct latch_range r;
	int failures = 0;

	for (int i = 0; i < 3; i++)
		latch_tree_insert(&table, &old_routes[i].node, &route_ops);

	/* One batch: readers see the old table or the new one, never a mix. */
	for (int i = 0; i < 3; i++) {
		move[2 * i] = (struct latch_tree_change){ LATCH_TREE_ERASE, &old_routes[i].node };
		move[2 * i + 1] =
		    (struct latch_tree_change){ LATCH_TREE_INSERT, &new_routes[i].node };
	}
	latch_tree_commit(&table, move, 6, &route_ops);
	printf("after the batch: 1 via %d, 2 via %d, 3 via %d, 4 via %d\n", via(1), via(2), via(3),
	       via(4));
	failures += via(1) != 200 || via(2) != 200 || via(3) != -1 || via(4) != 200;

	/* Replace: a lookup of prefix 2 finds the old or the new route, never none. */
	latch_tree_replace(&table, &new_routes[1].node, &fixed.node, &route_ops);
	failures += via(2) != 300;

	/* Range batch: in order, so the merged range may take the place of the two it replaces. */
	failures += latch_range_map_init(&map) != 0;
	failures += latch_range_insert(&map, 0x1000, 0x2000, "a", NULL) ||
	            latch_range_insert(&map, 0x2000, 0x3000, "b", NULL);
	failures += latch_range_commit(&map, merge, 3, NULL) != 0;
	failures += !latch_range_find(&map, 0x2000, &r) || r.value != merge[2].range.value;
	printf("merged range: [%#lx, %#lx)\n", (unsigned long)r.start, (unsigned long)r.end);
	latch_range_map_destroy(&map);

	printf("batches: %s\n", failures ? "WRONG" : "all answers right");
	return failures ? 1 : 0;
}
