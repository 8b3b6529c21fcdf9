/* SPDX-License-Identifier: MIT */
/*
 * The range map: the B+-tree core (btree.h) keyed by start, with span
 * leaves that also hold each range's end, and a writers' mutex that
 * survives fork().
 *
 * Batches go to the core's one engine (btree-commit.c), which checks each
 * change against the idle copy as the ones before it left it, undoes
 * what it made when one is bad, and otherwise flips once and replays.
 *
 * fork(): the child has only the thread that forked, so a mutex another
 * thread held at the fork would stay locked in it for ever, and that
 * thread's update would stay half done.  Every map therefore records the
 * fork generation its mutex belongs to (a counter bumped in the child of
 * every fork); the first writer call in a later generation re-initialises
 * the mutex and rebuilds the copy readers are not using, and the node
 * pools, from the copy they are using, which the latch keeps whole at
 * every instruction of the writer.  The fork waits for nothing and the
 * parent pays one compare per writer call.
 *
 * Payloads (latch_range_map_init_payload()): the map keeps a pool of
 * fixed-size payload slots, type-stable like the node pools (btree-pool.c:
 * carved from regions returned to the system only by destroy), and an
 * entry's value is the address of its slot.  A change that adds a range
 * takes a slot and fills it before the update starts; one that removes
 * ranges gives their slots back once its update is done, and the next
 * change may refill them at once, with no grace period:
 *
 *   - the writer's stores into a reused slot come after the flip of the
 *     update that removed its range from both copies (the flip's release
 *     fence orders the flip's store before them), and after every later
 *     flip;
 *   - a reader copies a slot's words inside its read section, after the
 *     descent that gave it the slot's address and before its re-check
 *     (latch_seq_read_retry(): an acquire fence, then the counter again);
 *   - so a reader whose copy read any word the writer stored after that
 *     flip synchronizes with the flip's fence, sees the counter moved on
 *     and retries: a copy that survives the re-check is one payload whole,
 *     the one the range held in the copy the reader was on.
 *
 * A slot holds no reference a reader follows, so a stale reader that
 * copies a slot being refilled, or reads a slot address from a stale leaf
 * (an entry's slot, 0, or the free-list link a freed leaf keeps, which
 * points into leaf memory at least LATCH_RANGE_PAYLOAD_MAX bytes long),
 * stays inside the pools' memory and is discarded by its re-check.
 * After fork(), a slot taken or given by a call the fork interrupted may
 * be neither free nor live in the child (never both): it is lost, not
 * reused while live.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <latch/range.h>

#include "btree.h"
#include "range-private.h"

/*
 * Mutants for the tests (tests/range): LATCH_RANGE_MUTANT=1 copies a
 * payload out after the re-check, 2 fills a new range's slot after the
 * update that publishes it.  0 in every build the library ships.
 */
#ifndef LATCH_RANGE_MUTANT
#define LATCH_RANGE_MUTANT 0
#endif

/*
 * A leaf's free-list link is a payload slot address to a stale reader: a
 * leaf must hold a payload.  At the real node capacity it holds the
 * largest; the model checker's lowered capacity (tests/model) takes
 * payloads up to a leaf's size only.
 */
#define PAYLOAD_LIMIT                                                                              \
	(LATCH_RANGE_PAYLOAD_MAX < sizeof(struct latch_btree_span_leaf)                            \
	     ? LATCH_RANGE_PAYLOAD_MAX                                                             \
	     : sizeof(struct latch_btree_span_leaf))
_Static_assert(LATCH_BTREE_FANOUT < 16u || PAYLOAD_LIMIT == LATCH_RANGE_PAYLOAD_MAX,
               "a stale reader may copy a payload from leaf memory");
_Static_assert(LATCH_RANGE_PAYLOAD_MAX % sizeof(uintptr_t) == 0 && 8 % sizeof(uintptr_t) == 0,
               "payloads are whole words");

/* The pool of payload slots of @m (node_size 0: a map without payloads). */
static struct latch_btree_pool *payloads(const struct latch_range_map *m)
{
	return (struct latch_btree_pool *)(uintptr_t)m->payload_;
}

/*
 * The bytes of each of @m's payloads, 0 for a map without: set before the
 * map is shared and never changed, so a plain load.  Inlined where the
 * lookups need it, where the exported latch_range_payload_size() would
 * be a call per lookup.
 */
static inline size_t payload_bytes(const struct latch_range_map *m)
{
	return payloads(m)->node_size;
}

/*
 * Forks between the process that loaded the library and this one: 0 in
 * that process, bumped in the child of every fork while the child has a
 * single thread.  Threads created later see it through pthread_create(),
 * so relaxed accesses suffice.
 */
static unsigned long fork_generation;

/* Serializes the adoption of maps into a new generation (adopt()). */
static pthread_mutex_t adopt_lock = PTHREAD_MUTEX_INITIALIZER;

/* Around fork(): no adoption is half done in the child. */
static void before_fork(void)
{
	pthread_mutex_lock(&adopt_lock);
}

static void after_fork_in_parent(void)
{
	pthread_mutex_unlock(&adopt_lock);
}

static void after_fork_in_child(void)
{
	/* The forking thread took the lock in before_fork() and is this one. */
	pthread_mutex_unlock(&adopt_lock);
	LATCH_STORE_RELAXED(&fork_generation, LATCH_LOAD_RELAXED(&fork_generation) + 1);
}

/* At load time, before any thread of the program can hold a map's mutex. */
__attribute__((constructor)) static void register_fork_handlers(void)
{
	if (pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) != 0) {
		fputs(
		    "liblatch: pthread_atfork failed: range maps cannot be written after fork()\n",
		    stderr);
		abort();
	}
}

int latch_range_map_init(struct latch_range_map *m)
{
	latch_btree_init(latch_btree_of_range(m), true);
	memset(m->payload_, 0, sizeof(m->payload_));
	if (pthread_mutex_init(&m->lock, NULL) != 0)
		return -ENOMEM;
	/* Relaxed: the map is not shared yet. */
	LATCH_STORE_RELAXED(&m->generation, LATCH_LOAD_RELAXED(&fork_generation));
	return 0;
}

int latch_range_map_init_payload(struct latch_range_map *m, size_t payload_size)
{
	int err;

	if (!payload_size || payload_size % 8 || payload_size > PAYLOAD_LIMIT)
		return -EINVAL;
	err = latch_range_map_init(m);
	if (!err)
		payloads(m)->node_size = payload_size;
	return err;
}

size_t latch_range_payload_size(const struct latch_range_map *m)
{
	return payload_bytes(m);
}

void latch_range_map_destroy(struct latch_range_map *m)
{
	latch_btree_destroy(latch_btree_of_range(m));
	latch_btree_pool_free(payloads(m));
	memset(m->payload_, 0, sizeof(m->payload_));
	pthread_mutex_destroy(&m->lock);
}

/*
 * Make @m's mutex and copies this process's own: the mutex may be held by
 * a thread of the parent that does not exist here, whose update may be
 * half done in the copy readers are not using.  A map that is merely new
 * to this generation (or was never written) goes through the same steps,
 * which then change nothing it holds.  Returns 0 or -ENOMEM (the map is
 * then adopted by a later writer call).  Cost O(n log n), once per map
 * and generation.
 */
static int adopt(struct latch_range_map *m, unsigned long generation)
{
	int err = 0;

	pthread_mutex_lock(&adopt_lock);
	/* Relaxed: adopt_lock orders this with the last adoption's store. */
	if (LATCH_LOAD_RELAXED(&m->generation) != generation) {
		/*
		 * No thread of this process holds or waits for the mutex:
		 * every writer call comes through here first, and none can
		 * pass before the store below.
		 */
		pthread_mutex_init(&m->lock, NULL);
		err = latch_btree_recover(latch_btree_of_range(m));
		/* Release: pairs with the acquire load in lock_writers(). */
		if (!err)
			LATCH_STORE_RELEASE(&m->generation, generation);
	}
	pthread_mutex_unlock(&adopt_lock);
	return err;
}

/* Take the writers' mutex of @m, adopting the map first after a fork.  0 or -ENOMEM. */
static int lock_writers(struct latch_range_map *m)
{
	unsigned long generation = LATCH_LOAD_RELAXED(&fork_generation);

	/*
	 * Acquire: a writer that sees the map adopted into this generation
	 * also sees the re-initialised mutex and the rebuilt copy.
	 */
	if (LATCH_LOAD_ACQUIRE(&m->generation) != generation && adopt(m, generation))
		return -ENOMEM;
	pthread_mutex_lock(&m->lock);
	return 0;
}

/* The range of entry @e; @m's readers and callers never see a payload slot's address. */
static struct latch_range range_of(const struct latch_range_map *m, const struct latch_btree_ent *e)
{
	return (struct latch_range){ (uintptr_t)e->key, e->end,
		                     payload_bytes(m) ? NULL : (void *)e->slot };
}

/* The core's op for each of the range map's (the order of enum latch_range_op). */
static const enum latch_btree_op core_op[] = {
	[LATCH_RANGE_INSERT] = LATCH_BTREE_INSERT,
	[LATCH_RANGE_ERASE] = LATCH_BTREE_ERASE,
	[LATCH_RANGE_ERASE_IF] = LATCH_BTREE_ERASE_IF,
	[LATCH_RANGE_STORE] = LATCH_BTREE_STORE,
};

/* Change @i of the batch @src (an array of struct latch_range_change) as the core's. */
static void change_of(const void *src, size_t i, struct latch_btree_change *c)
{
	const struct latch_range_change *rc = &((const struct latch_range_change *)src)[i];

	/* Unsigned: an op outside the enum, negative included, is a bad op. */
	c->op = (unsigned)rc->op < sizeof(core_op) / sizeof(core_op[0]) ? core_op[rc->op]
	                                                                : LATCH_BTREE_BAD_OP;
	c->ent =
	    (struct latch_btree_ent){ rc->range.start, (uintptr_t)rc->range.value, rc->range.end };
}

/*
 * Whether @n changes at @changes, @payload NULL or not, suit @m: a map
 * without payloads takes no payload; one with payloads takes one change
 * at a time, an erase or, with a payload, an insert or a store.
 */
static bool suits(const struct latch_range_map *m, const struct latch_range_change *changes,
                  size_t n, const void *payload)
{
	if (!payload_bytes(m))
		return !payload;
	return n == 1 &&
	       (payload ? changes->op == LATCH_RANGE_INSERT || changes->op == LATCH_RANGE_STORE
	                : changes->op == LATCH_RANGE_ERASE);
}

/* Store @size bytes of @src into @slot; the comment in commit_locked() says why relaxed suffices. */
static void fill_slot(void *slot, const void *src, size_t size)
{
	for (size_t i = 0; i < size / sizeof(uintptr_t); i++) {
		uintptr_t w;

		memcpy(&w, (const char *)src + i * sizeof(w), sizeof(w));
		LATCH_STORE_RELAXED(&((uintptr_t *)slot)[i], w);
	}
}

/*
 * Apply a batch, the writers' mutex held: the core's one engine does the
 * rest.  @removed: what a lone change removes (NULL: nobody asks); on a
 * map with payloads it must collect ranges with put_range(), and the
 * slots of what the change removed go back to the pool.  @payload: what
 * a lone insert or store puts in its range's slot.  *@bad and *@hit as
 * latch_btree_commit() sets them.
 */
static int commit_locked(struct latch_range_map *m, const struct latch_range_change *changes,
                         size_t n, size_t *bad, struct latch_btree_ent *hit,
                         struct latch_btree_removed *removed, const void *payload)
{
	struct latch_btree_pool *slots = payloads(m);
	struct latch_range_change one;
	void *slot = NULL;
	int err;

	if (payload) {
		if (latch_btree_pool_reserve(slots, 1))
			return -ENOMEM;
		/*
		 * A free slot: no reader that will pass its re-check can
		 * reach it (the file comment), so relaxed stores suffice; the
		 * flip that publishes the range (its release store) orders
		 * them before every reader sent to the new copy.
		 */
		slot = latch_btree_pool_take(slots);
		if (LATCH_RANGE_MUTANT != 2)
			fill_slot(slot, payload, slots->node_size);
		/* Field by field: the padding after op is never read (a model checker would see it). */
		one.op = changes->op;
		one.range = (struct latch_range){ changes->range.start, changes->range.end, slot };
		changes = &one;
	}
	err = latch_btree_commit(latch_btree_of_range(m), n, change_of, changes, bad, hit, removed);
	if (LATCH_RANGE_MUTANT == 2 && slot)
		fill_slot(slot, payload, slots->node_size);
	if (err && slot)
		latch_btree_pool_give(slots, slot);
	/*
	 * After success the removed ranges are in neither copy, and the flip
	 * that sent readers away from the last copy holding them is done:
	 * their slots may be refilled at once (the file comment).  Reported
	 * or not, a slot's address is not the caller's.
	 */
	for (size_t i = 0; slots->node_size && removed && i < removed->n && i < removed->max; i++) {
		struct latch_range *r = &((struct latch_range *)removed->ctx)[i];

		if (!err)
			latch_btree_pool_give(slots, r->value);
		r->value = NULL;
	}
	return err;
}

/* commit_locked() under the writers' mutex, once the changes are found to suit the map. */
static int commit(struct latch_range_map *m, const struct latch_range_change *changes, size_t n,
                  size_t *failed, struct latch_range *collision,
                  struct latch_btree_removed *removed, const void *payload)
{
	struct latch_btree_ent hit;
	size_t bad = n;
	int err;

	if (!suits(m, changes, n, payload)) {
		if (failed)
			*failed = 0;
		return -EINVAL;
	}
	if (!n)
		return 0;
	err = lock_writers(m);
	if (!err) {
		err = commit_locked(m, changes, n, &bad, &hit, removed, payload);
		pthread_mutex_unlock(&m->lock);
	}
	if (err == -EEXIST && collision)
		*collision = range_of(m, &hit);
	if (err && failed)
		*failed = bad;
	return err;
}

int latch_range_commit(struct latch_range_map *m, const struct latch_range_change *changes,
                       size_t n, size_t *failed)
{
	return commit(m, changes, n, failed, NULL, NULL, NULL);
}

static int insert(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                  const void *payload, struct latch_range *collision)
{
	const struct latch_range_change c = { LATCH_RANGE_INSERT, { start, end, value } };

	return commit(m, &c, 1, NULL, collision, NULL, payload);
}

int latch_range_insert(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                       struct latch_range *collision)
{
	return insert(m, start, end, value, NULL, collision);
}

int latch_range_insert_payload(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                               const void *payload, struct latch_range *collision)
{
	/* A NULL payload on a map with payloads is the insert without one: -EINVAL. */
	return insert(m, start, end, NULL, payload, collision);
}

/*
 * The engine's removed entry @i, into the caller's array of ranges @ctx,
 * with the entry's slot as the value (commit() hides a payload slot).
 */
static void put_range(void *ctx, size_t i, const struct latch_btree_ent *e)
{
	((struct latch_range *)ctx)[i] =
	    (struct latch_range){ (uintptr_t)e->key, e->end, (void *)e->slot };
}

int latch_range_remove(struct latch_range_map *m, uintptr_t start, struct latch_range *removed)
{
	const struct latch_range_change c = { LATCH_RANGE_ERASE, { start, 0, NULL } };
	struct latch_range gone;
	struct latch_btree_removed r = { put_range, &gone, 1, 0 };
	int err = commit(m, &c, 1, NULL, NULL, &r, NULL);

	if (!err && removed)
		*removed = gone;
	return err;
}

int latch_range_erase(struct latch_range_map *m, uintptr_t start)
{
	return latch_range_remove(m, start, NULL);
}

int latch_range_erase_if(struct latch_range_map *m, const struct latch_range *expected)
{
	const struct latch_range_change c = { LATCH_RANGE_ERASE_IF, *expected };

	return commit(m, &c, 1, NULL, NULL, NULL, NULL);
}

int latch_range_erase_if_payload(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                                 const void *payload)
{
	const struct latch_btree *t = latch_btree_of_range(m);
	struct latch_btree_ent e = { 0, 0, 0 };
	struct latch_range gone;
	struct latch_btree_removed r = { put_range, &gone, 1, 0 };
	size_t bad = 1;
	int err;

	if (!payload_bytes(m) || !payload)
		return -EINVAL;
	err = lock_writers(m);
	if (err)
		return err;
	/*
	 * Compared and erased under the mutex: no other writer runs between.
	 * The slot's bytes are read plainly: only this writer stores them.
	 */
	if (!latch_btree_span_lookup(t, start, LATCH_BTREE_EXACT, &e))
		err = -ENOENT;
	else if (e.end != end || memcmp((const void *)e.slot, payload, payload_bytes(m)) != 0)
		err = -ESTALE;
	else
		err = commit_locked(m,
		                    &(const struct latch_range_change){
		                        LATCH_RANGE_ERASE_IF, { start, end, (void *)e.slot } },
		                    1, &bad, NULL, &r, NULL);
	pthread_mutex_unlock(&m->lock);
	return err;
}

static int store(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                 const void *payload, struct latch_range *evicted, size_t max_evicted,
                 size_t *n_evicted)
{
	const struct latch_range_change c = { LATCH_RANGE_STORE, { start, end, value } };
	struct latch_btree_removed r = { put_range, evicted, evicted ? max_evicted : 0, 0 };
	int err = commit(m, &c, 1, NULL, NULL, &r, payload);

	if (n_evicted)
		*n_evicted = err && err != -ENOSPC ? 0 : r.n;
	return err;
}

int latch_range_store(struct latch_range_map *m, uintptr_t start, uintptr_t end, void *value,
                      struct latch_range *evicted, size_t max_evicted, size_t *n_evicted)
{
	return store(m, start, end, value, NULL, evicted, max_evicted, n_evicted);
}

int latch_range_store_payload(struct latch_range_map *m, uintptr_t start, uintptr_t end,
                              const void *payload, struct latch_range *evicted, size_t max_evicted,
                              size_t *n_evicted)
{
	return store(m, start, end, NULL, payload, evicted, max_evicted, n_evicted);
}

static void load_get(const void *src, size_t i, struct latch_btree_ent *e)
{
	const struct latch_range *r = &((const struct latch_range *)src)[i];

	*e = (struct latch_btree_ent){ r->start, (uintptr_t)r->value, r->end };
}

int latch_range_load_sorted(struct latch_range_map *m, const struct latch_range *ranges, size_t n,
                            size_t *failed)
{
	size_t bad = n;
	int err = 0;

	/* A map with payloads takes its ranges one at a time, with their payloads. */
	if (payload_bytes(m))
		bad = 0, err = -EINVAL;
	for (size_t i = 0; i < n && !err; i++) {
		bad = i;
		if (ranges[i].start >= ranges[i].end ||
		    (i && ranges[i].start < ranges[i - 1].start))
			err = -EINVAL;
		else if (i && ranges[i].start < ranges[i - 1].end)
			err = -EEXIST;
	}
	if (!err) {
		bad = n;
		err = lock_writers(m);
	}
	if (!err) {
		err = latch_btree_load(latch_btree_of_range(m), n, load_get, ranges);
		pthread_mutex_unlock(&m->lock);
	}
	if (err && failed)
		*failed = bad;
	return err;
}

int latch_range_reserve(struct latch_range_map *m, size_t n)
{
	int err = lock_writers(m);

	if (!err) {
		struct latch_btree_pool *slots = payloads(m);

		err = latch_btree_reserve(latch_btree_of_range(m), n);
		/* A map with payloads: a slot for each of @n ranges, those in use included. */
		if (!err && slots->node_size)
			err = latch_btree_pool_reserve(
			    slots, latch_btree_sub0(n, slots->total - slots->free));
		pthread_mutex_unlock(&m->lock);
	}
	return err;
}

/* ---- readers ---- */

static bool lookup(const struct latch_range_map *m, uint64_t x, enum latch_btree_mode mode,
                   struct latch_range *out)
{
	struct latch_btree_ent e;
	bool hit = latch_btree_span_lookup(latch_btree_of_range(m), x, mode, &e);

	if (hit && out)
		*out = range_of(m, &e);
	return hit;
}

bool latch_range_find(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	struct latch_btree_ent e;

	/* One descent; the leaf entry holds the end, copied out in the same attempt. */
	if (!latch_btree_span_lookup(latch_btree_of_range(m), addr, LATCH_BTREE_FLOOR, &e) ||
	    addr >= e.end)
		return false;
	if (out)
		*out = range_of(m, &e);
	return true;
}

/* Load @size bytes of @slot into @dst; the comment in latch_range_find_payload() says why. */
static void copy_slot(void *dst, uintptr_t slot, size_t size)
{
	/* Whole words (the size is a multiple of 8): each memcpy() is one store. */
	for (size_t i = 0; i < size / sizeof(uintptr_t); i++) {
		uintptr_t w = LATCH_LOAD_RELAXED(&((const uintptr_t *)slot)[i]);

		memcpy((char *)dst + i * sizeof(w), &w, sizeof(w));
	}
}

bool latch_range_find_payload(const struct latch_range_map *m, uintptr_t addr,
                              struct latch_range *out, void *payload)
{
	const struct latch_btree *t = latch_btree_of_range(m);
	size_t size = payload ? payload_bytes(m) : 0;
	struct latch_btree_ent e = { 0, 0, 0 };
	bool bad = false, hit = false;

	LATCH_SEQ_READ_(&t->seq, cp)
	{
		e = (struct latch_btree_ent){ 0, 0, 0 };
		hit = latch_btree_attempt(t, cp, addr, LATCH_BTREE_FLOOR, &e, &bad) &&
		      addr < e.end && e.slot;
		/*
		 * Relaxed loads of the slot, inside the attempt: the re-check
		 * (latch_seq_read_retry(): acquire fence, counter again)
		 * comes after them, so a copy that read any word the writer
		 * stored after a flip is discarded (the file comment).  A
		 * stale attempt's e.slot is a slot, 0, or leaf memory at
		 * least this long: always inside the pools.
		 */
		if (hit && size && LATCH_RANGE_MUTANT != 1)
			copy_slot(payload, e.slot, size);
	}
	/* A copy readers are sent to is complete: no attempt on it is abandoned. */
	if (bad || !hit)
		return false;
	/* What the flips so far published happens-before, for ThreadSanitizer. */
	latch_tsan_acquire_(&t->seq);
	if (LATCH_RANGE_MUTANT == 1 && size)
		copy_slot(payload, e.slot, size);
	if (out)
		*out = range_of(m, &e);
	return true;
}

size_t latch_range_find_many(const struct latch_range_map *m, const uintptr_t *addrs, size_t n,
                             struct latch_range *out, bool *found)
{
	struct latch_btree_ent e[LATCH_BTREE_MANY];
	uint64_t x[LATCH_BTREE_MANY];
	size_t hits = 0;

	for (size_t at = 0; at < n; at += LATCH_BTREE_MANY) {
		size_t k = n - at < LATCH_BTREE_MANY ? n - at : LATCH_BTREE_MANY;

		for (size_t i = 0; i < k; i++)
			x[i] = addrs[at + i];
		latch_btree_span_lookup_many(latch_btree_of_range(m), x, k, LATCH_BTREE_FLOOR, e,
		                             found + at);
		/* One floor descent each; the end, copied out with it, tells whether it holds. */
		for (size_t i = 0; i < k; i++) {
			found[at + i] = found[at + i] && addrs[at + i] < e[i].end;
			if (found[at + i])
				out[at + i] = range_of(m, &e[i]);
			hits += found[at + i];
		}
	}
	return hits;
}

bool latch_range_floor(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	return lookup(m, addr, LATCH_BTREE_FLOOR, out);
}

bool latch_range_ceil(const struct latch_range_map *m, uintptr_t addr, struct latch_range *out)
{
	return lookup(m, addr, LATCH_BTREE_CEIL, out);
}

bool latch_range_first(const struct latch_range_map *m, struct latch_range *out)
{
	return lookup(m, 0, LATCH_BTREE_CEIL, out);
}

bool latch_range_last(const struct latch_range_map *m, struct latch_range *out)
{
	return lookup(m, UINTPTR_MAX, LATCH_BTREE_FLOOR, out);
}

bool latch_range_next(const struct latch_range_map *m, uintptr_t start, struct latch_range *out)
{
	return start != UINTPTR_MAX && lookup(m, (uint64_t)start + 1, LATCH_BTREE_CEIL, out);
}

bool latch_range_prev(const struct latch_range_map *m, uintptr_t start, struct latch_range *out)
{
	return start != 0 && lookup(m, (uint64_t)start - 1, LATCH_BTREE_FLOOR, out);
}

size_t latch_range_size(const struct latch_range_map *m)
{
	return latch_btree_size(latch_btree_of_range(m));
}

/* ---- the checker of payload slots (range-private.h) ---- */

/* Addresses, growing as a census or a walk collects them. */
struct addrs {
	uintptr_t *a;
	size_t n, cap;
};

static void addrs_add(struct addrs *s, uintptr_t x)
{
	if (s->n < s->cap)
		s->a[s->n] = x;
	s->n++; /* beyond cap: the caller sized it from what the map records, which is wrong */
}

static void add_slot(void *ctx, const struct latch_btree_ent *e)
{
	addrs_add(ctx, e->slot);
}

static void add_chunk(void *chunk, size_t bytes, void *ctx)
{
	(void)bytes;
	addrs_add(ctx, (uintptr_t)chunk);
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return (x > y) - (x < y);
}

/* Is @x the address of a slot of @p, whose chunks are the sorted @chunks? */
static bool is_slot(const struct latch_btree_pool *p, const struct addrs *chunks, uintptr_t x)
{
	size_t lo = 0, hi = chunks->n;

	/* The last chunk that starts at or below x. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (chunks->a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && x - chunks->a[lo - 1] < LATCH_BTREE_CHUNK * p->node_size &&
	       (x - chunks->a[lo - 1]) % p->node_size == 0;
}

/* Are the sorted @s's addresses all slots of @p, none twice? */
static const char *slots_valid(const struct latch_btree_pool *p, const struct addrs *chunks,
                               const struct addrs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!is_slot(p, chunks, s->a[i]))
			return "an address that is not a payload slot of the map";
		if (i && s->a[i] == s->a[i - 1])
			return "a payload slot referred to twice";
	}
	return NULL;
}

static const char *check_payloads(const struct latch_range_map *m, struct addrs *chunks,
                                  struct addrs live[2], struct addrs *free_slots)
{
	const struct latch_btree *t = latch_btree_of_range(m);
	const struct latch_btree_pool *p = payloads(m);
	const char *why = NULL;

	latch_btree_pool_chunks_(p, add_chunk, chunks);
	if (chunks->n != chunks->cap)
		return "the pool's chunk count differs from its total";
	qsort(chunks->a, chunks->n, sizeof(uintptr_t), by_address);
	for (unsigned cp = 0; cp < 2; cp++) {
		struct latch_btree_census census = { 0, 0, 0, 0, add_slot, &live[cp] };

		if (latch_btree_check(t, cp, &census, &why))
			return why;
		qsort(live[cp].a, live[cp].n, sizeof(uintptr_t), by_address);
		why = slots_valid(p, chunks, &live[cp]);
		if (why)
			return why;
	}
	if (live[0].n != live[1].n ||
	    memcmp(live[0].a, live[1].a, live[0].n * sizeof(uintptr_t)) != 0)
		return "the copies refer to different payload slots";
	for (void *s = p->free_list; s && free_slots->n <= free_slots->cap;
	     s = latch_btree_pool_next(p, s))
		addrs_add(free_slots, (uintptr_t)s);
	if (free_slots->n != p->free || free_slots->n > free_slots->cap)
		return "the free list's length differs from the pool's free count";
	qsort(free_slots->a, free_slots->n, sizeof(uintptr_t), by_address);
	why = slots_valid(p, chunks, free_slots);
	if (why)
		return why;
	for (size_t i = 0; i < free_slots->n; i++)
		if (bsearch(&free_slots->a[i], live[0].a, live[0].n, sizeof(uintptr_t), by_address))
			return "a payload slot both free and in use";
	if (live[0].n + free_slots->n != p->total)
		return "a payload slot neither free nor in use";
	return NULL;
}

int latch_range_check_payloads(const struct latch_range_map *m, const char **why)
{
	const struct latch_btree *t = latch_btree_of_range(m);
	const struct latch_btree_pool *p = payloads(m);
	size_t total = p->total;
	struct addrs chunks = { malloc((total / LATCH_BTREE_CHUNK + 1) * sizeof(uintptr_t)), 0,
		                total / LATCH_BTREE_CHUNK };
	struct addrs live[2] = {
		{ malloc((t->copy[0].size + 1) * sizeof(uintptr_t)), 0, t->copy[0].size },
		{ malloc((t->copy[1].size + 1) * sizeof(uintptr_t)), 0, t->copy[1].size }
	};
	struct addrs free_slots = { malloc((total + 1) * sizeof(uintptr_t)), 0, total };
	const char *broken = NULL;
	int err = 0;

	if (!chunks.a || !live[0].a || !live[1].a || !free_slots.a)
		err = -ENOMEM;
	else if (p->node_size)
		broken = check_payloads(m, &chunks, live, &free_slots);
	if (broken) {
		err = -EPROTO;
		if (why)
			*why = broken;
	}
	free(chunks.a);
	free(live[0].a);
	free(live[1].a);
	free(free_slots.a);
	return err;
}
