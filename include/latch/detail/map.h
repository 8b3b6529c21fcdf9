/* SPDX-License-Identifier: MIT */
/*
 * latch/detail/map.h - the size of the storage that struct latch_map and
 * struct latch_range_map keep for the library's private B+-tree core.
 *
 * Not part of the API: nothing here may be named or relied on directly;
 * it changes without notice (and with the SONAME).  Include <latch/map.h>
 * or <latch/range.h>.
 */
#ifndef LATCH_DETAIL_MAP_H
#define LATCH_DETAIL_MAP_H

/*
 * Pointer-sized words of the core: the latch counter, two copies' root,
 * size and height, two node pools of eight words, and a flag.  The
 * library checks that it matches the core's size and alignment.
 */
#define LATCH_BTREE_CORE_WORDS_ 24

/*
 * Pointer-sized words of a range map's pool of payload slots: a node
 * pool's eight.
 */
#define LATCH_RANGE_PAYLOAD_WORDS_ 8

#endif /* LATCH_DETAIL_MAP_H */
