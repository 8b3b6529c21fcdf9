/* SPDX-License-Identifier: MIT */
/*
 * latch/detail/map.h - the parts of struct latch_map's layout that
 * <latch/map.h> does not describe.
 *
 * Not part of the API: nothing here may be named or relied on directly;
 * it changes without notice.  Include <latch/map.h>.
 */
#ifndef LATCH_DETAIL_MAP_H
#define LATCH_DETAIL_MAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A pool of map nodes of one kind; contents private. */
struct latch_btree_pool_ {
	void *free_list;  /* a node; the next free node is in its slot[0] */
	void *chunks;     /* the newest chunk; each chunk links to the previous one */
	size_t total;     /* nodes in all chunks */
	size_t free;      /* nodes on the free list */
	size_t node_size; /* bytes per node */
};

#ifdef __cplusplus
}
#endif

#endif /* LATCH_DETAIL_MAP_H */
