/* SPDX-License-Identifier: MIT */
/*
 * What the range map's tests check inside it (src/range.c).  Not
 * installed.
 */
#ifndef LATCH_SRC_RANGE_PRIVATE_H
#define LATCH_SRC_RANGE_PRIVATE_H

#include <latch/range.h>

/*
 * Check the payload slots of @m (a map without payloads passes): every
 * range of each copy refers to a slot of the pool, no slot is referred
 * to twice, both copies refer to the same slots, and the free list holds
 * exactly the other slots of the pool, each once.  Returns 0; -EPROTO
 * with *@why (unless NULL) naming the first broken invariant; -ENOMEM.
 * Cost O(n log n).  The writer, or anyone while no writer call runs.
 */
int latch_range_check_payloads(const struct latch_range_map *m, const char **why);

#endif /* LATCH_SRC_RANGE_PRIVATE_H */
