/* SPDX-License-Identifier: MIT */
/*
 * Published maps: the registry latch_registry (<latch/layout.h>), a
 * latch over two tables of descriptor addresses, and one descriptor per
 * published map.
 *
 * The registry's writer is this file only, serialized by registry_lock:
 * it changes the table readers are not sent to, flips the counter, and
 * makes the same change to the other table, the protocol of
 * latch_seq_write() on the registry's own 32-bit counter (the layout
 * fixes its width, so it is not a struct latch_seq).
 *
 * describe() is the one function that knows where a map keeps its
 * counter, copies and pools: everything else here works from the
 * descriptor it fills.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen(), mlock() */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <latch/atomic.h>
#include <latch/publish.h>

#include "btree.h"

_Static_assert(sizeof(((struct latch_seq *)0)->sequence) == sizeof(uint32_t),
               "the layout's counter is 32 bits wide");
_Static_assert(sizeof(struct latch_layout_map) == 192, "see tests/remote/layout.expected");

LATCH_API struct latch_layout_registry latch_registry = {
	.magic = LATCH_LAYOUT_REGISTRY_MAGIC,
	.version = LATCH_LAYOUT_VERSION,
	.slots = LATCH_LAYOUT_SLOTS,
};

/* What the library keeps per registry slot, beside the published descriptor. */
struct published {
	const void *owner;                      /* the struct latch_map or latch_range_map */
	struct latch_layout_map *desc;          /* NULL: the slot is free */
	const struct latch_btree_pool *pool[2]; /* the map's node pools */
};

/* Serializes the registry's writers; slot i of @published is table slot i. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct published published[LATCH_LAYOUT_SLOTS];

/* Around fork(): the child never inherits registry_lock held by a thread it does not have. */
static void before_fork(void)
{
	pthread_mutex_lock(&registry_lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&registry_lock);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
	if (pthread_atfork(before_fork, after_fork, after_fork) != 0) {
		fputs("liblatch: pthread_atfork failed: maps cannot be published after fork()\n",
		      stderr);
		abort();
	}
}

/*
 * Fill @d with the addresses of @core's counter and copies and @pool with
 * its node pools.  The only code here that knows the map's fields.
 */
static void describe(const struct latch_btree *core, struct latch_layout_map *d,
                     const struct latch_btree_pool *pool[2])
{
	d->sequence = (uintptr_t)&core->seq.sequence;
	for (unsigned cp = 0; cp < 2; cp++) {
		d->root[cp] = (uintptr_t)&core->copy[cp].root;
		d->entries[cp] = (uintptr_t)&core->copy[cp].size;
		d->height[cp] = (uintptr_t)&core->copy[cp].height;
	}
	d->count_width = sizeof(core->copy[0].size);
	d->inner_size = sizeof(struct latch_btree_node);
	d->leaf_size =
	    core->spans ? sizeof(struct latch_btree_span_leaf) : sizeof(struct latch_btree_node);
	d->ends_offset = core->spans ? offsetof(struct latch_btree_span_leaf, end) : 0;
	pool[0] = &core->pool[0];
	pool[1] = &core->pool[1];
}

/* The registry's counter, as the latch counter it is (latch/seq.h). */
_Static_assert(sizeof(struct latch_seq) == sizeof(latch_registry.sequence) &&
                   offsetof(struct latch_seq, sequence) == 0,
               "the registry's counter is a struct latch_seq");

static struct latch_seq *registry_seq(void)
{
	return (struct latch_seq *)(void *)&latch_registry.sequence;
}

/* One change of the registry: slot @i of each table becomes @desc. */
struct registry_change {
	unsigned i;
	struct latch_layout_map *desc;
};

static int registry_change_table(void *arg, unsigned idx, bool replay)
{
	const struct registry_change *c = arg;

	(void)replay;
	/*
	 * Relaxed: readers are not sent to table @idx while it changes; the
	 * flip of latch_seq_update() publishes it (its release store orders
	 * the descriptor, written before, and this store before a reader's
	 * acquire load of the new count), and a reader still on the other
	 * table when it is replayed detects that by its retry check (for a
	 * reader outside the process, its next system call orders the loads).
	 */
	LATCH_STORE_RELAXED(&latch_registry.table[idx][c->i], (uint64_t)(uintptr_t)c->desc);
	return 0;
}

/* Store @desc in slot @i of both tables, one flip between them.  Under registry_lock. */
static void registry_set(unsigned i, struct latch_layout_map *desc)
{
	struct registry_change c = { i, desc };

	(void)latch_seq_update(registry_seq(), registry_change_table, &c);
}

/* ---- residency (LATCH_PUBLISH_RESIDENT) ---- */

static void lock_chunk(void *chunk, size_t bytes, void *failed)
{
	if (mlock(chunk, bytes) != 0)
		*(int *)failed = 1;
}

static void unlock_chunk(void *chunk, size_t bytes, void *unused)
{
	(void)unused;
	munlock(chunk, bytes);
}

/*
 * The pools' chunk hook: a chunk of a resident map's pool is locked in
 * memory before its nodes are used; when that fails the chunk is refused
 * and the update fails with -ENOMEM.
 */
static int chunk_added(const struct latch_btree_pool *p, void *chunk, size_t bytes)
{
	int failed = 0;

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < LATCH_LAYOUT_SLOTS; i++) {
		const struct published *e = &published[i];

		if (e->desc && (e->desc->flags & LATCH_PUBLISH_RESIDENT) &&
		    (e->pool[0] == p || e->pool[1] == p))
			lock_chunk(chunk, bytes, &failed);
	}
	pthread_mutex_unlock(&registry_lock);
	return failed;
}

/* Lock (@lock) or unlock every chunk of @e's pools; 0 or -ENOMEM. */
static int set_resident(const struct published *e, bool lock)
{
	int failed = 0;

	for (unsigned k = 0; k < 2; k++)
		latch_btree_pool_chunks_(e->pool[k], lock ? lock_chunk : unlock_chunk, &failed);
	if (failed) {
		for (unsigned k = 0; k < 2; k++)
			latch_btree_pool_chunks_(e->pool[k], unlock_chunk, NULL);
		return -ENOMEM;
	}
	return 0;
}

/* ---- publishing ---- */

static int publish(const void *owner, const struct latch_btree *core, enum latch_layout_kind kind,
                   const char *name, unsigned flags)
{
	struct latch_layout_map *d;
	struct published *e = NULL;
	size_t len;
	int err = 0;

	if (!owner || !name || (flags & ~(LATCH_PUBLISH_NAMES | LATCH_PUBLISH_RESIDENT)))
		return -EINVAL;
	len = strnlen(name, LATCH_LAYOUT_NAME_MAX);
	if (len == 0 || len >= LATCH_LAYOUT_NAME_MAX)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = (struct latch_layout_map){
		.magic = LATCH_LAYOUT_MAP_MAGIC,
		.version = LATCH_LAYOUT_VERSION,
		.kind = kind,
		.flags = flags,
		.fanout = LATCH_BTREE_FANOUT,
		.key_width = sizeof(uint64_t),
		.slot_width = sizeof(uintptr_t),
		.sequence_width = sizeof(uint32_t),
		.slots_offset = offsetof(struct latch_btree_node, slot),
		.leaf_tag = LATCH_BTREE_LEAF,
		.max_depth = LATCH_BTREE_MAX_DEPTH,
		.padding = LATCH_LAYOUT_PAD_REPEAT_LAST,
		.node_align = _Alignof(struct latch_btree_node),
	};
	memcpy(d->name, name, len);

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < LATCH_LAYOUT_SLOTS; i++) {
		struct published *p = &published[i];

		if (p->desc && (p->owner == owner || strcmp(p->desc->name, d->name) == 0)) {
			err = -EEXIST;
			goto out;
		}
		if (!p->desc && !e)
			e = p;
	}
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	e->owner = owner;
	describe(core, d, e->pool);
	if (flags & LATCH_PUBLISH_RESIDENT) {
		/* Relaxed: the writers that read it are not running (see chunk_refused()). */
		LATCH_STORE_RELAXED(&latch_btree_chunk_hook_, chunk_added);
		err = set_resident(e, true);
		if (err)
			goto out;
	}
	e->desc = d;
	registry_set((unsigned)(e - published), d);
	d = NULL;
out:
	if (err && e)
		*e = (struct published){ NULL, NULL, { NULL, NULL } };
	pthread_mutex_unlock(&registry_lock);
	free(d);
	return err;
}

static int unpublish(const void *owner)
{
	struct latch_layout_map *d = NULL;

	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < LATCH_LAYOUT_SLOTS && owner; i++) {
		struct published *e = &published[i];

		if (!e->desc || e->owner != owner)
			continue;
		d = e->desc;
		registry_set(i, NULL);
		if (d->flags & LATCH_PUBLISH_RESIDENT)
			set_resident(e, false);
		*e = (struct published){ NULL, NULL, { NULL, NULL } };
		break;
	}
	pthread_mutex_unlock(&registry_lock);
	if (!d)
		return -ENOENT;
	/*
	 * A reader outside the process that loaded the old table may still
	 * read the descriptor: with its magic gone, it rejects what it finds
	 * (or fails to read it once the memory is unmapped).  Relaxed: such a
	 * reader validates whatever it reads.
	 */
	LATCH_STORE_RELAXED(&d->magic, (uint64_t)0);
	free(d);
	return 0;
}

int latch_map_publish(struct latch_map *m, const char *name, unsigned flags)
{
	return publish(m, m ? latch_btree_of_map(m) : NULL, LATCH_LAYOUT_KIND_MAP, name, flags);
}

int latch_map_unpublish(struct latch_map *m)
{
	return unpublish(m);
}

int latch_range_publish(struct latch_range_map *m, const char *name, unsigned flags)
{
	return publish(m, m ? latch_btree_of_range(m) : NULL, LATCH_LAYOUT_KIND_RANGE, name, flags);
}

int latch_range_unpublish(struct latch_range_map *m)
{
	return unpublish(m);
}
