/* SPDX-License-Identifier: MIT */
/*
 * latch/bpf/latch.bpf.h - find an address in a published range map of the
 * current task, from an eBPF program (a perf-event program, a uprobe):
 * the reader of <latch/remote.h> for programs that run in the kernel while
 * the task is interrupted, where no system call and no page fault can be
 * made.  See latch_bpf(7).
 *
 * Two halves.  The loader, in userspace, fills a struct latch_bpf_map from
 * the map's descriptor (latch_remote_describe(), then
 * latch_bpf_map_from_layout()) and hands it to the program (a global, a
 * map).  The program calls latch_bpf_range_find() with it, an address and
 * a scratch node of LATCH_BPF_NODE_MAX bytes (a per-CPU array's value: a
 * node does not fit the 512-byte stack beside the rest).
 *
 * The protocol is the library's own: load the map's counter, walk copy
 * (counter & 1) from its root, load the counter again, and start over
 * (at most LATCH_BPF_ATTEMPTS times) when it changed.  The target's writer
 * never changes the copy the counter names, so a sample that interrupted
 * the writer in the middle of an update (the case the kernel's latched
 * tree exists for) reads a whole copy.  Every read is
 * bpf_probe_read_user(), which fails instead of faulting: a page that is
 * not resident makes the lookup LATCH_BPF_UNREADABLE (publish with
 * LATCH_PUBLISH_RESIDENT to keep the nodes in memory).
 *
 * Nothing read is trusted, as in <latch/remote.h>: the height must be 1 to
 * the descriptor's max_depth, every reference aligned and tagged as its
 * level requires, every node's keys non-decreasing over all 16 entries
 * (strictly increasing over the used ones, the rest repeating the last),
 * a range's end above its start; every loop is bounded and every index
 * masked, so a corrupt target gives LATCH_BPF_INVALID, and the verifier
 * accepts the program.
 *
 * The loader's half is C11 and C++; the program's half is BPF C for clang.
 *
 * Only 64-bit targets (8-byte references and counts) whose CPU does not
 * reorder loads with loads (x86-64): a program cannot issue a read
 * barrier, and the protocol needs the counter's loads ordered with the
 * nodes' (see the comments at each load).  latch_bpf_map_from_layout()
 * refuses other descriptors; the header refuses to compile for another
 * target architecture (__TARGET_ARCH_x86 must be defined, as libbpf's
 * bpf_tracing.h asks too).
 *
 * Mutants for the tests (LATCH_BPF_MUTANT): 1 walks the copy the writer
 * changes ((counter & 1) ^ 1); 2 never compares the counters.
 */
#ifndef LATCH_BPF_LATCH_BPF_H
#define LATCH_BPF_LATCH_BPF_H

/*
 * Plain C types: the structs below are shared by the program (BPF, where
 * unsigned long long is unsigned long long) and its loader (any 32- or 64-bit ABI),
 * with no header of the kernel's in between.
 */

/** Bytes of a scratch node: the largest node latch_bpf_range_find() reads. */
#define LATCH_BPF_NODE_MAX  512
/** Attempts a lookup makes before it gives up with LATCH_BPF_GAVE_UP. */
#define LATCH_BPF_ATTEMPTS  4
/** Levels a walk takes at most (LATCH_LAYOUT_MAX_DEPTH). */
#define LATCH_BPF_MAX_DEPTH 32
/** Entries per node (LATCH_LAYOUT_FANOUT). */
#define LATCH_BPF_FANOUT    16

/** What a walk needs of a map's descriptor (struct latch_layout_map). */
struct latch_bpf_map {
	unsigned long long sequence;  /* address of the counter */
	unsigned long long root[2];   /* address of each copy's root reference */
	unsigned long long height[2]; /* address of each copy's height */
	unsigned int inner_size;      /* bytes of an inner node */
	unsigned int leaf_size;       /* bytes of a leaf */
	unsigned int ends_slot;       /* where a leaf's ends start, in 8-byte words */
	unsigned int node_align;      /* a power of two */
	unsigned int max_depth;       /* 1 to LATCH_BPF_MAX_DEPTH */
	unsigned int leaf_tag;        /* the bit that marks a leaf */
};

/** A range found: [start, end) and its value. */
struct latch_bpf_range {
	unsigned long long start, end, value;
};

/** A scratch node (a per-CPU array's value). */
struct latch_bpf_node {
	unsigned long long word[LATCH_BPF_NODE_MAX / 8];
};

/** What a lookup saw: its counter's first and last loads, and its attempts. */
struct latch_bpf_trace {
	unsigned int seq_first, seq_last;
	unsigned int attempts;
};

/** The answers of latch_bpf_range_find(). */
enum latch_bpf_result {
	LATCH_BPF_FOUND = 1,       /* a range holds the address */
	LATCH_BPF_NONE = 0,        /* no range holds it */
	LATCH_BPF_UNREADABLE = -1, /* bpf_probe_read_user() failed: a page not resident */
	LATCH_BPF_INVALID = -2,    /* what was read is not a valid map */
	LATCH_BPF_GAVE_UP = -3     /* the counter changed during every attempt */
};

#ifndef __bpf__
/* ---- the loader's half ---- */
#include <errno.h>

#include <latch/layout.h>

/**
 * latch_bpf_map_from_layout() - fill *@m from the descriptor @d (of a range
 * map, as latch_remote_describe() gives it).  Returns 0, or -EPROTO when
 * the BPF reader cannot walk that map: not a range map, a 32-bit target,
 * nodes over LATCH_BPF_NODE_MAX bytes.  Cost O(1); any context.
 */
static inline int latch_bpf_map_from_layout(const struct latch_layout_map *d,
                                            struct latch_bpf_map *m)
{
	if (d->kind != LATCH_LAYOUT_KIND_RANGE || d->slot_width != 8 || d->count_width != 8 ||
	    d->key_width != 8 || d->fanout != LATCH_BPF_FANOUT ||
	    d->slots_offset != LATCH_BPF_FANOUT * 8 || d->ends_offset % 8 ||
	    d->ends_offset + LATCH_BPF_FANOUT * 8 > d->leaf_size ||
	    d->inner_size < 2 * LATCH_BPF_FANOUT * 8 || d->inner_size > LATCH_BPF_NODE_MAX ||
	    d->leaf_size > LATCH_BPF_NODE_MAX || d->max_depth == 0 ||
	    d->max_depth > LATCH_BPF_MAX_DEPTH || d->node_align == 0 ||
	    (d->node_align & (d->node_align - 1)) || d->leaf_tag == 0 ||
	    d->leaf_tag >= d->node_align)
		return -EPROTO;
	m->sequence = d->sequence;
	for (int c = 0; c < 2; c++) {
		m->root[c] = d->root[c];
		m->height[c] = d->height[c];
	}
	m->inner_size = d->inner_size;
	m->leaf_size = d->leaf_size;
	m->ends_slot = d->ends_offset / 8;
	m->node_align = d->node_align;
	m->max_depth = d->max_depth;
	m->leaf_tag = d->leaf_tag;
	return 0;
}

#else
/* ---- the program's half ---- */
#include <bpf/bpf_helpers.h>

#ifndef __TARGET_ARCH_x86
#error "latch.bpf.h: needs a CPU that keeps loads in order (x86-64: -D__TARGET_ARCH_x86)"
#endif

#ifndef LATCH_BPF_MUTANT
#define LATCH_BPF_MUTANT 0
#endif

/*
 * 1 when @a < @b, without a branch: the borrow of @a - @b.  A branch per
 * key would give the verifier a state per count, level and attempt, too
 * many to explore.
 */
static __always_inline unsigned int latch_bpf_below_(unsigned long long a, unsigned long long b)
{
	return (unsigned int)(((~a & b) | (~(a ^ b) & (a - b))) >> 63);
}

/*
 * One walk of copy @cp for @x: LATCH_BPF_FOUND (*@out set), _NONE,
 * _UNREADABLE or _INVALID.  At most height + 2 reads, each bounded.
 */
static __always_inline int latch_bpf_walk_(const struct latch_bpf_map *m, unsigned int cp,
                                           unsigned long long x, struct latch_bpf_node *node,
                                           struct latch_bpf_range *out)
{
	unsigned long long ref, levels;

	if (bpf_probe_read_user(&ref, sizeof(ref), (const void *)m->root[cp & 1]) ||
	    bpf_probe_read_user(&levels, sizeof(levels), (const void *)m->height[cp & 1]))
		return LATCH_BPF_UNREADABLE;
	if (!ref)
		return LATCH_BPF_NONE;
	if (levels == 0 || levels > m->max_depth)
		return LATCH_BPF_INVALID;
	for (unsigned int level = 0; level < LATCH_BPF_MAX_DEPTH; level++) {
		int leaf = (ref & m->leaf_tag) != 0;
		unsigned long long addr = ref & ~(unsigned long long)m->leaf_tag;
		unsigned int size = leaf ? m->leaf_size : m->inner_size, c = 0, i;

		if (leaf != (level + 1 == levels) || !addr || (addr & (m->node_align - 1)) ||
		    size > LATCH_BPF_NODE_MAX)
			return LATCH_BPF_INVALID;
		if (bpf_probe_read_user(node->word, size, (const void *)addr))
			return LATCH_BPF_UNREADABLE;
		/* Keys <= x, over all 16 (padding repeats the last), non-decreasing. */
		for (i = 0; i < LATCH_BPF_FANOUT; i++) {
			if (i && node->word[i] < node->word[i - 1])
				return LATCH_BPF_INVALID;
			c += 1 - latch_bpf_below_(x, node->word[i]); /* key <= x */
		}
		if (!leaf) {
			/* Entry i holds the least key of child i: descend into the last <= x. */
			i = c ? c - 1 : 0;
			ref = node->word[(LATCH_BPF_FANOUT + i) & (LATCH_BPF_NODE_MAX / 8 - 1)];
			continue;
		}
		if (c == 0)
			return LATCH_BPF_NONE;
		i = c - 1;
		out->start = node->word[i & (LATCH_BPF_FANOUT - 1)];
		out->value = node->word[(LATCH_BPF_FANOUT + i) & (LATCH_BPF_NODE_MAX / 8 - 1)];
		out->end = node->word[(m->ends_slot + i) & (LATCH_BPF_NODE_MAX / 8 - 1)];
		if (out->end <= out->start)
			return LATCH_BPF_INVALID;
		return x < out->end ? LATCH_BPF_FOUND : LATCH_BPF_NONE;
	}
	return LATCH_BPF_INVALID;
}

/**
 * latch_bpf_range_find() - the range of map @m (of the current task) that
 * holds @x.
 *
 * Returns LATCH_BPF_FOUND and sets *@out, LATCH_BPF_NONE, or
 * LATCH_BPF_UNREADABLE (a page of the map is not resident, or the map is
 * gone), LATCH_BPF_INVALID (not a valid map), LATCH_BPF_GAVE_UP (the
 * counter changed during each of LATCH_BPF_ATTEMPTS attempts).  *@t (unless
 * NULL) gets the counter's first and last loads and the attempts made.
 * @node: scratch of LATCH_BPF_NODE_MAX bytes.  Cost: one
 * bpf_probe_read_user() call for the first load of the counter, then
 * height + 3 per attempt (root, height, a node per level, the counter);
 * about 0.8 us in all on x86-64 (docs/benchmarks.md).  Any
 * program type that may call bpf_probe_read_user(); the target's writer
 * may run on another CPU or be the task the program interrupted.
 */
static __always_inline int latch_bpf_range_find(const struct latch_bpf_map *m, unsigned long long x,
                                                struct latch_bpf_node *node,
                                                struct latch_bpf_range *out,
                                                struct latch_bpf_trace *t)
{
	unsigned int seq, again;
	int res = LATCH_BPF_GAVE_UP;

	/*
	 * The counter's first load.  Pairs with the writer's release store of
	 * the counter (latch_seq_write_flip()): on x86-64 the later loads of
	 * the walk are not reordered before it, and the helper call is a
	 * compiler barrier, so the walk reads what the writer stored before
	 * the flip it saw.
	 */
	if (bpf_probe_read_user(&seq, sizeof(seq), (const void *)m->sequence))
		return LATCH_BPF_UNREADABLE;
	if (t)
		t->seq_first = seq;
	for (unsigned int attempt = 0; attempt < LATCH_BPF_ATTEMPTS; attempt++) {
		/* The copy the counter names (the mutant: the one the writer changes). */
		res = latch_bpf_walk_(m, (seq & 1) ^ (LATCH_BPF_MUTANT == 1), x, node, out);
		/*
		 * The counter's second load: not reordered before the walk's loads
		 * (x86-64 keeps loads in order; a helper call is a compiler
		 * barrier).  The writer changes copy (seq & 1) only after a flip
		 * that comes before the change in its store order, so when this
		 * load still sees seq, no change to that copy was visible to the
		 * walk's loads: what it read was whole.
		 */
		if (bpf_probe_read_user(&again, sizeof(again), (const void *)m->sequence))
			return LATCH_BPF_UNREADABLE;
		if (t) {
			t->seq_last = again;
			t->attempts = attempt + 1;
		}
		if (again == seq || LATCH_BPF_MUTANT == 2)
			return res;
		seq = again;
		res = LATCH_BPF_GAVE_UP;
	}
	return res;
}

#endif /* __bpf__ */

#endif /* LATCH_BPF_LATCH_BPF_H */
