/* SPDX-License-Identifier: MIT */
/*
 * ordered-lookups: timers kept by deadline in a latched tree.  Any
 * context can ask for the next deadline after a time (ceil), the last
 * one before it (floor), or walk them in order, without waiting.
 */
#include <stdio.h>

#include <latch/tree.h>

struct timer {
	long deadline; /* the key; fixed while the timer is in the tree */
	const char *name;
	struct latch_tree_node node;
};

static struct timer *timer_of(const struct latch_tree_node *n)
{
	return n ? latch_tree_entry(n, struct timer, node) : NULL;
}

static bool timer_less(const struct latch_tree_node *a, const struct latch_tree_node *b)
{
	return timer_of(a)->deadline < timer_of(b)->deadline;
}

static int timer_comp(const void *key, const struct latch_tree_node *n)
{
	long k = *(const long *)key, d = timer_of(n)->deadline;

	return (k > d) - (k < d);
}

static const struct latch_tree_ops timer_ops = { timer_less, timer_comp };
static struct latch_tree_root timers = LATCH_TREE_ROOT_INIT;

int main(void)
{
	static struct timer t[] = {
		{ .deadline = 30, .name = "flush" },
		{ .deadline = 10, .name = "tick" },
		{ .deadline = 50, .name = "gc" },
		{ .deadline = 20, .name = "poll" },
	};
	static const long expected_order[] = { 10, 20, 30, 50 };
	const struct latch_tree_node *n;
	long now = 25, i = 0;
	int failures = 0;

	for (int k = 0; k < 4; k++)
		latch_tree_insert(&timers, &t[k].node, &timer_ops);

	/* The next deadline at or after now, and the last one at or before it. */
	printf("next at/after %ld: %s\n", now,
	       timer_of(latch_tree_find_ceil(&timers, &now, &timer_ops))->name);
	printf("last at/before %ld: %s\n", now,
	       timer_of(latch_tree_find_floor(&timers, &now, &timer_ops))->name);
	failures += timer_of(latch_tree_find_ceil(&timers, &now, &timer_ops))->deadline != 30;
	failures += timer_of(latch_tree_find_floor(&timers, &now, &timer_ops))->deadline != 20;

	/* An in-order walk: each step is its own lookup (weakly consistent). */
	for (n = latch_tree_first(&timers); n; n = latch_tree_next(&timers, n, &timer_ops), i++) {
		printf("  %ld %s\n", timer_of(n)->deadline, timer_of(n)->name);
		failures += i >= 4 || timer_of(n)->deadline != expected_order[i];
	}
	failures += i != 4;

	/* Stepping from an element that was erased meanwhile still works. */
	latch_tree_erase(&timers, &t[0].node, &timer_ops); /* "flush", 30 */
	failures += timer_of(latch_tree_next(&timers, &t[0].node, &timer_ops))->deadline != 50;
	failures += timer_of(latch_tree_prev(&timers, &t[0].node, &timer_ops))->deadline != 20;
	failures += timer_of(latch_tree_last(&timers))->deadline != 50;

	printf("ordered-lookups: %s\n", failures ? "WRONG" : "all answers right");
	return failures ? 1 : 0;
}
