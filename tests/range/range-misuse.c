/* SPDX-License-Identifier: MIT */
/*
 * A range map's insides are not a latch_map: with -DMISUSE=N each case
 * tries to hand them to a latch_map_* call and must not compile; without
 * MISUSE, the right calls beside them compile warning-free.  Compiled as
 * C11 and C++17 by compile-fails.sh (-Werror); never linked or run.
 */
#include <latch/map.h>
#include <latch/range.h>

void range_calls(struct latch_range_map *rm, struct latch_map *m);

void range_calls(struct latch_range_map *rm, struct latch_map *m)
{
	(void)latch_range_insert(rm, 0x1000, 0x2000, NULL, NULL);
	(void)latch_map_insert(m, 1, NULL);
#if MISUSE == 1
	/* The member a range map once embedded: there is no map inside any more. */
	(void)latch_map_insert(&rm->tree, 1, NULL);
#elif MISUSE == 2
	/* The range map itself, or its storage, where a map is expected. */
	(void)latch_map_insert(rm, 1, NULL);
#elif MISUSE == 3
	(void)latch_map_insert(rm->core_, 1, NULL);
#endif
}
