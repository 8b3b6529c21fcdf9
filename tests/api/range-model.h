/* SPDX-License-Identifier: MIT */
/*
 * A reference model of a range map over a small address space, for tests:
 * which range owns each address, and the whole-map checks against it.
 */
#ifndef LATCH_TESTS_RANGE_MODEL_H
#define LATCH_TESTS_RANGE_MODEL_H

#include <latch/range.h>

#include "../tree-invariants.h"

#define SPACE 512L /* addresses 0 .. SPACE-1 can be in ranges */
#define POOL  64L  /* ranges the tests use */

struct range_model {
	struct latch_range ranges[POOL];
	bool linked[POOL];
	long owner[SPACE]; /* index of the range holding each address, or -1 */
	long nlinked;
};

static inline bool range_model_less(const struct latch_tree_node *a,
                                    const struct latch_tree_node *b)
{
	return latch_range_of_(a)->start < latch_range_of_(b)->start;
}

static const struct latch_tree_ops range_model_ops = { range_model_less, NULL };

/* Rebuild owner[] and nlinked from linked[]. */
static inline void range_model_paint(struct range_model *rm)
{
	rm->nlinked = 0;
	for (long a = 0; a < SPACE; a++)
		rm->owner[a] = -1;
	for (long i = 0; i < POOL; i++) {
		if (!rm->linked[i])
			continue;
		rm->nlinked++;
		for (uintptr_t a = rm->ranges[i].start; a < rm->ranges[i].end; a++)
			rm->owner[a] = i;
	}
}

/* The range the model says latch_range_lower(@addr) returns, or NULL. */
static inline const struct latch_range *range_model_lower(const struct range_model *rm,
                                                          uintptr_t addr)
{
	const struct latch_range *best = NULL;

	for (long i = 0; i < POOL; i++)
		if (rm->linked[i] && rm->ranges[i].start <= addr &&
		    (!best || rm->ranges[i].start > best->start))
			best = &rm->ranges[i];
	return best;
}

/* Both copies, both copies' bounds, and every lookup agree with the model. */
static inline void range_model_check(const struct latch_range_map *m, const struct range_model *rm)
{
	uintptr_t low = 0, high = 0;
	const struct latch_range *lower = NULL;
	bool any = false;

	check_latch_tree(&m->tree, rm->nlinked, &range_model_ops);
	for (long i = 0; i < POOL; i++) {
		if (!rm->linked[i])
			continue;
		low = any && low < rm->ranges[i].start ? low : rm->ranges[i].start;
		high = rm->ranges[i].end > high ? rm->ranges[i].end : high;
		any = true;
	}
	for (unsigned idx = 0; idx < 2; idx++)
		CHECK(m->low[idx] == low && m->high[idx] == high,
		      "copy %u bounds [%lu, %lu), expected [%lu, %lu)", idx,
		      (unsigned long)m->low[idx], (unsigned long)m->high[idx], (unsigned long)low,
		      (unsigned long)high);

	for (uintptr_t a = 0; a < (uintptr_t)SPACE + 40; a++) {
		const struct latch_range *r = latch_range_find(m, a);
		long own = a < (uintptr_t)SPACE ? rm->owner[a] : -1;

		CHECK(r == (own < 0 ? NULL : &rm->ranges[own]), "find(%lu): wrong range",
		      (unsigned long)a);
		if (a < (uintptr_t)SPACE && own < 0)
			lower = range_model_lower(rm, a);
		else if (own >= 0)
			lower = &rm->ranges[own];
		CHECK(latch_range_lower(m, a) == lower, "lower(%lu): wrong range",
		      (unsigned long)a);
	}
	CHECK(latch_range_find(m, UINTPTR_MAX) == NULL, "find(UINTPTR_MAX) is outside every range");
	CHECK(latch_range_lower(m, UINTPTR_MAX) == lower, "lower(UINTPTR_MAX) is the last range");
}

#endif /* LATCH_TESTS_RANGE_MODEL_H */
