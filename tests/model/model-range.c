/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (e): the range map of <latch/range.h>, through its own
 * latch_range_commit() and latch_range_find() (and
 * latch_range_load_sorted() to build the start): the real src/range.c and
 * src/btree-*.c, whose leaves hold an end beside each start and value.  What harness (f) does not check and this one
 * does: the relaxed loads of the ends, the copy-out of a whole range
 * (start, end, value) in one attempt, and the range map's writer path
 * (its mutex, the overlap checks on the idle copy, the batch's replay).
 *
 * The node capacity is lowered to 4, the pools are stocked from static
 * nodes, and a few C library calls are shimmed: model-btree.h.  The
 * library's pthread_atfork() registration (a load-time constructor) is a
 * no-op here: nothing forks.
 *
 * Scenario (range [k, k + 5) has the value 1000 + k, never dereferenced).
 * Built by main() before any thread starts: one leaf holding [10, 15),
 * [20, 25) and [30, 35), in both copies.  The writer makes one update, a
 * batch of two changes (one flip) that replaces the range starting at 30
 * by a longer one with another value, in the same leaf entry:
 *
 *	{10, 20, 30}  -- erase 30, insert [30, 38) -> 2030 -->  {10, 20, 30'}
 *
 * The reader looks up 32 (in [30, 35) before the flip, in [30, 38) after
 * it: the answer must be one of them whole, never the start, end and value
 * of different ranges) and then 36 (only in the new range), each checked
 * against the oracle of model.h (the harness reads the map's counter).
 * Node reuse under a stale reader, which the range map's leaves share with
 * the map's, is harness (f)'s scenario; a bigger batch here (the merge and
 * split of harness (f) around this replacement) verified too but explored
 * 29821 executions in 10 minutes.
 */
#include "model-btree.h"

/* The library registers fork handlers at load time; nothing forks here. */
#define pthread_atfork(prepare, parent, child) ((void)(prepare), (void)(parent), (void)(child), 0)
/* Its failure message: GenMC's <stdio.h> has fprintf() but no fputs(). */
#define fputs(text, stream)                    fprintf(stream, "%s", text)

#include <latch/range.h>

#include <src/range.c>

static struct latch_range_map ranges;

static struct latch_range range_at(uintptr_t start, uintptr_t end, uintptr_t value)
{
	return (struct latch_range){ start, end, (void *)value };
}

/* Lifetimes (model.h), set by main(): [30, 35), [30, 38). */
static struct model_life r30, r30_longer;

/*
 * latch_range_find() of @addr, checked by model_check(): @cands are the
 * ranges that ever hold @addr, as they must be returned, with their
 * lifetimes.
 */
static void model_find(uintptr_t addr, const struct latch_range *cands,
                       const struct model_life *const *lives, int n)
{
	/* The harness's own look at the counter: relaxed, it orders nothing. */
	unsigned before = LATCH_LOAD_RELAXED(&latch_btree_of_range(&ranges)->seq.sequence);
	struct latch_range out;
	bool found = latch_range_find(&ranges, addr, &out);
	unsigned after = LATCH_LOAD_RELAXED(&latch_btree_of_range(&ranges)->seq.sequence);
	int which = -1;

	for (int i = 0; found && i < n; i++)
		if (out.start == cands[i].start && out.end == cands[i].end &&
		    out.value == cands[i].value)
			which = i;
	assert(!found || which >= 0); /* one whole range, never a torn one */
	model_check(before, after, lives, n, which);
}

static void *writer(void *arg)
{
	const struct latch_range_change batch[] = {
		{ LATCH_RANGE_ERASE, range_at(30, 0, 0) },
		{ LATCH_RANGE_INSERT, range_at(30, 38, 2030) },
	};

	(void)arg;
	assert(latch_range_commit(&ranges, batch, 2, NULL) == 0);
	return NULL;
}

/*
 * One reader.  32 comes first: its first attempt carries no
 * synchronization from an earlier one, so only the flip's release store
 * and the reader's acquire load of the count order the idle copy's
 * changes before it (design.md 3.2 W2, 3.3 R1), and only the flip's
 * release fence and the reader's acquire fence make it see the flip after
 * loading a relaxed end or value the replay stored (W3, R3 + R4).
 */
static void *reader(void *arg)
{
	const struct latch_range both[] = { range_at(30, 35, 1030), range_at(30, 38, 2030) };
	const struct model_life *lives[] = { &r30, &r30_longer };

	(void)arg;
	model_find(32, both, lives, 2);
	model_find(36, &both[1], &lives[1], 1);
	return NULL;
}

int main(void)
{
	const struct latch_range start_ranges[] = {
		range_at(10, 15, 1010),
		range_at(20, 25, 1020),
		range_at(30, 35, 1030),
	};
	pthread_t r, w;
	unsigned start;

	assert(latch_range_map_init(&ranges) == 0);
	model_stock_pools(latch_btree_of_range(&ranges));
	assert(latch_range_load_sorted(&ranges, start_ranges, 3, NULL) == 0);
	start = LATCH_LOAD_RELAXED(&latch_btree_of_range(&ranges)->seq.sequence);
	r30.until = start + 1; /* replaced by the update */
	r30_longer.from = start + 1;
	r30_longer.until = MODEL_NEVER;
	w = model_spawn(writer, NULL);
	r = model_spawn(reader, NULL);
	model_join(w);
	model_join(r);
	assert(latch_btree_of_range(&ranges)->copy[0].height == 1 &&
	       latch_btree_of_range(&ranges)->copy[1].height == 1);
	latch_range_map_destroy(&ranges);
	return 0;
}
