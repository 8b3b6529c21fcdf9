/* SPDX-License-Identifier: MIT */
/*
 * latch/layout.h - the read-side layout of published maps, for readers
 * outside the process (another process, an eBPF program).
 *
 * An ABI of its own, versioned by LATCH_LAYOUT_VERSION and described in
 * latch_layout(7): every change to anything here, or to what a reader
 * must do with it, raises the version (tests/remote/layout.expected keeps
 * the layout of every version, and the layout test fails when the layout
 * changes under an old version).  The library's public structs may change
 * without it: a descriptor holds the addresses of what a reader needs,
 * not their offsets.
 *
 * Every field has a fixed width, so a 64-bit reader reads a 32-bit
 * target's descriptors unchanged; addresses are those of the target
 * process, widened to 64 bits.  Integers are in the target's byte order.
 *
 *	latch_registry (an exported symbol of liblatch, <latch/publish.h>)
 *	  -> struct latch_layout_registry: a latch counter and two copies of a
 *	     table of descriptor addresses; readers use table[sequence & 1]
 *	  -> struct latch_layout_map: one per published map; immutable while
 *	     published; the addresses of the map's counter and of each copy's
 *	     root reference, entry count and height, and the node geometry.
 *
 * A reader reads a map as the library's own readers do: load the counter,
 * walk copy (counter & 1) from its root, load the counter again and start
 * over if it changed.  The target's writer never changes the copy the
 * counter names, so a reader that stopped the target (or found it
 * stopped) mid-update still reads a whole copy.
 */
#ifndef LATCH_LAYOUT_H
#define LATCH_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Constants of the layout (see latch_layout(7)). */
enum latch_layout_const {
	LATCH_LAYOUT_VERSION = 1,   /* raised on any change to this file's layout or meaning */
	LATCH_LAYOUT_SLOTS = 64,    /* descriptor addresses per registry table */
	LATCH_LAYOUT_NAME_MAX = 64, /* bytes of a descriptor's name, its NUL included */
	LATCH_LAYOUT_FANOUT = 16,   /* entries per node */
	LATCH_LAYOUT_KEY_WIDTH = 8, /* bytes per key */
	LATCH_LAYOUT_LEAF_TAG = 1,  /* the bit of a reference that marks a leaf */
	LATCH_LAYOUT_MAX_DEPTH = 32 /* levels a tree may have, at most */
};

/** What a published map is. */
enum latch_layout_kind {
	LATCH_LAYOUT_KIND_MAP = 1,  /* struct latch_map: keys -> values */
	LATCH_LAYOUT_KIND_RANGE = 2 /* struct latch_range_map: [start, end) -> value */
};

/** How a node with fewer than LATCH_LAYOUT_FANOUT entries is padded. */
enum latch_layout_padding {
	/* a node with c < 16 used entries repeats entry c-1 (key, slot, end) in entries c..15 */
	LATCH_LAYOUT_PAD_REPEAT_LAST = 1
};

/** The first word of the registry: "LTCHREG" and a 1 in ASCII, read as a little-endian word. */
#define LATCH_LAYOUT_REGISTRY_MAGIC UINT64_C(0x314745524843544c)
/** The first word of a descriptor: "LTCHMAP" and a 1, read the same way. */
#define LATCH_LAYOUT_MAP_MAGIC      UINT64_C(0x3150414d4843544c)

/**
 * The registry: which maps the process published.  A latch: the writer
 * (latch_map_publish() and friends, serialized by a mutex) changes the
 * table readers are not sent to, flips the counter (a release store), and
 * makes the same change to the other table.  Readers load @sequence, read
 * table[@sequence & 1] (its nonzero entries, in any order) and load
 * @sequence again, starting over when it changed.
 */
struct latch_layout_registry {
	uint64_t magic;    /* LATCH_LAYOUT_REGISTRY_MAGIC */
	uint32_t version;  /* LATCH_LAYOUT_VERSION */
	uint32_t slots;    /* LATCH_LAYOUT_SLOTS */
	uint32_t sequence; /* the latch counter */
	uint32_t reserved; /* 0 */
	/* Addresses of the published maps' descriptors; 0: a free slot. */
	uint64_t table[2][LATCH_LAYOUT_SLOTS];
};

/**
 * A published map.  Written once before it enters the registry, not
 * changed while it is there.  The fields a reader uses to walk the map:
 *
 * Counter: a uint32_t at @sequence; copy c = counter & 1.  Copy c's root
 * reference is a @slot_width-byte word at @root[c] (0: the copy is
 * empty), its entry count and its height (levels, leaves included) are
 * @count_width-byte words at @entries[c] and @height[c].
 *
 * Reference: a node's address with bit @leaf_tag set for a leaf.  Nodes
 * are @node_align-aligned; an inner node is @inner_size bytes, a leaf
 * @leaf_size.  Node: @fanout keys of @key_width bytes at offset 0, then
 * @fanout slots of @slot_width bytes at @slots_offset (inner: child
 * references; leaf: values); a range map's leaf also has @fanout ends of
 * @slot_width bytes at @ends_offset.  Keys increase strictly over the used
 * entries; padding: LATCH_LAYOUT_PAD_REPEAT_LAST.  Inner entry i holds
 * the least key of child i's subtree.
 */
struct latch_layout_map {
	uint64_t magic;                   /* LATCH_LAYOUT_MAP_MAGIC */
	uint32_t version;                 /* LATCH_LAYOUT_VERSION */
	uint32_t kind;                    /* enum latch_layout_kind */
	uint32_t flags;                   /* the LATCH_PUBLISH_* flags the map was published with */
	uint32_t fanout;                  /* LATCH_LAYOUT_FANOUT */
	uint32_t key_width;               /* LATCH_LAYOUT_KEY_WIDTH */
	uint32_t slot_width;              /* sizeof(uintptr_t) in the target: 8 or 4 */
	uint32_t count_width;             /* sizeof(size_t) in the target: 8 or 4 */
	uint32_t sequence_width;          /* 4 */
	uint32_t inner_size;              /* bytes of an inner node */
	uint32_t leaf_size;               /* bytes of a leaf */
	uint32_t slots_offset;            /* fanout * key_width */
	uint32_t ends_offset;             /* range map: where a leaf's ends start; map: 0 */
	uint32_t leaf_tag;                /* LATCH_LAYOUT_LEAF_TAG */
	uint32_t max_depth;               /* LATCH_LAYOUT_MAX_DEPTH */
	uint32_t padding;                 /* enum latch_layout_padding */
	uint32_t node_align;              /* bytes every node's address is a multiple of */
	uint64_t sequence;                /* address of the counter */
	uint64_t root[2];                 /* address of each copy's root reference */
	uint64_t entries[2];              /* address of each copy's entry count */
	uint64_t height[2];               /* address of each copy's height */
	char name[LATCH_LAYOUT_NAME_MAX]; /* NUL-terminated, 1 to 63 bytes before the NUL */
};

#ifdef __cplusplus
}
#endif

#endif /* LATCH_LAYOUT_H */
