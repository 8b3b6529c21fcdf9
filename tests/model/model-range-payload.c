/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (g): a range map with payloads (<latch/range.h>,
 * latch_range_map_init_payload()), through latch_range_erase(),
 * latch_range_insert_payload() and latch_range_find_payload(): the real
 * src/range.c and src/btree-*.c.  What harness (e) does not check and
 * this one does: a payload slot reused at once by the next update, with
 * no grace period, while a reader that found the old range copies it
 * (src/range.c, the file comment: the copy is made inside the read
 * section, before the re-check, and a slot is filled before the update
 * that publishes it).
 *
 * The node capacity is lowered to 4, the node pools are stocked from
 * static nodes, and a few C library calls are shimmed: model-btree.h.
 * The payload pool is stocked with one static slot, so the insert must
 * take the slot the erase gave back.  Payloads are two words (16 bytes,
 * the smallest that can tear on a 64-bit target), each word different in
 * each payload.
 *
 * Scenario.  Built by main() before any thread starts: one range [30, 35)
 * holding the payload {1030, 1031}.  The writer makes two updates (two
 * flips): it erases the range, which gives its slot back to the pool, then
 * inserts [30, 38) holding {2030, 2031}, which refills that slot:
 *
 *	{[30, 35) {1030, 1031}}  -- erase 30 -->  {}
 *	  -- insert [30, 38) {2030, 2031} -->  {[30, 38) {2030, 2031}}
 *
 * The reader looks up 32 once (a lookup with no synchronization left over
 * from an earlier attempt), checked against the oracle of model.h, and
 * asserts that what it found is one range whole with its own
 * payload whole: [30, 35) with {1030, 1031}, or [30, 38) with {2030,
 * 2031}, never a payload torn between the two or a range with the other's
 * payload.  run.sh's mutants late-copy (the copy made after the re-check)
 * and late-fill (the slot filled after the update that publishes the
 * range) must fail that assertion.  A second lookup (of 36, in the new
 * range only) verified too, but took 8428 executions and 2 minutes
 * instead of 3482 and 50 seconds.
 */
#include "model-btree.h"

/* The library registers fork handlers at load time; nothing forks here. */
#define pthread_atfork(prepare, parent, child) ((void)(prepare), (void)(parent), (void)(child), 0)
/* Its failure message: GenMC's <stdio.h> has fprintf() but no fputs(). */
#define fputs(text, stream)                    fprintf(stream, "%s", text)

#include <latch/range.h>

#include <src/range.c>

struct payload {
	uint64_t w[2];
};

static struct latch_range_map ranges;

/* The one payload slot of the pool (zero, as a new chunk's). */
static struct payload model_slot_stock;

/* The ranges that ever hold an address, their payloads and lifetimes (model.h). */
static const struct latch_range r30 = { 30, 35, NULL }, r30_longer = { 30, 38, NULL };
static const struct payload p30 = { { 1030, 1031 } }, p30_longer = { { 2030, 2031 } };
static struct model_life life30, life30_longer;

/*
 * latch_range_find_payload() of @addr, checked by model_check(): @cands
 * are the ranges that ever hold @addr with their payloads @pays and
 * lifetimes @lives.
 */
static void model_find(uintptr_t addr, const struct latch_range *const *cands,
                       const struct payload *const *pays, const struct model_life *const *lives,
                       int n)
{
	/* The harness's own look at the counter: relaxed, it orders nothing. */
	unsigned before = LATCH_LOAD_RELAXED(&latch_btree_of_range(&ranges)->seq.sequence);
	struct latch_range out;
	struct payload got;
	bool found = latch_range_find_payload(&ranges, addr, &out, &got);
	unsigned after = LATCH_LOAD_RELAXED(&latch_btree_of_range(&ranges)->seq.sequence);
	int which = -1;

	for (int i = 0; found && i < n; i++)
		if (out.start == cands[i]->start && out.end == cands[i]->end &&
		    got.w[0] == pays[i]->w[0] && got.w[1] == pays[i]->w[1])
			which = i;
	assert(!found || which >= 0); /* one range whole, with its own payload whole */
	model_check(before, after, lives, n, which);
}

static void *writer(void *arg)
{
	(void)arg;
	assert(latch_range_erase(&ranges, 30) == 0);
	/* The pool's one slot, just given back by the erase. */
	assert(payloads(&ranges)->free == 1);
	assert(latch_range_insert_payload(&ranges, 30, 38, &p30_longer, NULL) == 0);
	return NULL;
}

static void *reader(void *arg)
{
	const struct latch_range *both[] = { &r30, &r30_longer };
	const struct payload *pays[] = { &p30, &p30_longer };
	const struct model_life *lives[] = { &life30, &life30_longer };

	(void)arg;
	model_find(32, both, pays, lives, 2);
	return NULL;
}

int main(void)
{
	pthread_t r, w;
	unsigned start;

	assert(latch_range_map_init_payload(&ranges, sizeof(struct payload)) == 0);
	model_stock_pools(latch_btree_of_range(&ranges));
	latch_btree_pool_give(payloads(&ranges),
	                      (struct latch_btree_node *)(void *)&model_slot_stock);
	payloads(&ranges)->total++;
	assert(latch_range_insert_payload(&ranges, 30, 35, &p30, NULL) == 0);
	assert(payloads(&ranges)->free == 0);
	start = LATCH_LOAD_RELAXED(&latch_btree_of_range(&ranges)->seq.sequence);
	life30.until = start + 1;       /* erased by the first update */
	life30_longer.from = start + 2; /* inserted by the second */
	life30_longer.until = MODEL_NEVER;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	latch_range_map_destroy(&ranges);
	return 0;
}
