/* SPDX-License-Identifier: MIT */
/*
 * code-map: a JIT profiler's code map.  Loads insert a region of compiled
 * code; unloads erase it with latch_range_erase_if() and the record the
 * load inserted, so a late unload never erases code that reused the
 * addresses; code placed over addresses whose old code was never unloaded
 * goes in with latch_range_store(), which evicts the old regions in the
 * same flip, so a sample never falls into a gap, and reports them (a
 * count first when the room is too small, then a second call).  A
 * profiler's signal handler resolves sampled program counters throughout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <latch/range.h>

/* A region of compiled code, as the JIT keeps it. */
struct code {
	const char *name;
	struct latch_range record; /* what the load inserted: the unload's expectation */
};

static struct latch_range_map map;

/* Any context: the name of the code holding @pc, or "?". */
static const char *symbolize(uintptr_t pc)
{
	struct latch_range r;

	return latch_range_find(&map, pc, &r) ? ((const struct code *)r.value)->name : "?";
}

static volatile sig_atomic_t sampled;

static void on_sample(int sig)
{
	(void)sig;
	/* Safe here: a lookup never waits, takes no lock and touches no caller memory. */
	sampled = symbolize(0x1100)[0] != '?';
}

/* Load: the region is new, so it must overlap nothing. */
static int load(struct code *c, uintptr_t start, uintptr_t end)
{
	c->record = (struct latch_range){ start, end, c };
	return latch_range_insert(&map, start, end, c, NULL);
}

/* Unload: erase the region only if it is still the one this load inserted. */
static int unload(const struct code *c)
{
	int err = latch_range_erase_if(&map, &c->record);

	printf("unload %-9s %s\n", c->name,
	       err == 0         ? "erased"
	       : err == -ESTALE ? "skipped: its start was reused by newer code"
	                        : "skipped: already evicted");
	return err;
}

/*
 * Place @c over [start, end) whatever old code is registered there: one
 * store evicts it.  Room for two evictions first; when more overlap, the
 * store changes nothing and says how many, and a second call with that
 * much room does it.
 */
static int place(struct code *c, uintptr_t start, uintptr_t end)
{
	struct latch_range two[2], *evicted = two;
	size_t room = 2, n = 0;
	int err;

	c->record = (struct latch_range){ start, end, c };
	err = latch_range_store(&map, start, end, c, evicted, room, &n);
	if (err == -ENOSPC) {
		printf("place %s: %zu regions overlap, more than room for %zu\n", c->name, n, room);
		evicted = malloc(n * sizeof(*evicted));
		if (!evicted)
			return -ENOMEM;
		room = n;
		err = latch_range_store(&map, start, end, c, evicted, room, &n);
	}
	for (size_t i = 0; !err && i < n; i++)
		printf("place %s: evicted %s [%#lx, %#lx)\n", c->name,
		       ((const struct code *)evicted[i].value)->name,
		       (unsigned long)evicted[i].start, (unsigned long)evicted[i].end);
	if (evicted != two)
		free(evicted);
	return err;
}

int main(void)
{
	static struct code interp = { .name = "interp" }, fib = { .name = "fib" },
	                   sum = { .name = "sum" }, fib2 = { .name = "fib.v2" },
	                   loop = { .name = "loop" }, big = { .name = "big" };
	struct latch_range r;
	int failures = 0;

	failures += latch_range_map_init(&map) != 0;
	failures += load(&interp, 0x1000, 0x1800) != 0;
	failures += load(&fib, 0x2000, 0x2400) != 0;
	failures += load(&sum, 0x2400, 0x2600) != 0;
	failures += load(&loop, 0x3000, 0x3100) != 0;

	/* fib is recompiled in place without unloading the old code: one store evicts it. */
	failures += place(&fib2, 0x2000, 0x2200) != 0;
	failures += symbolize(0x2010) != fib2.name || symbolize(0x2300)[0] != '?';
	/* The late unload of the old fib must not erase fib.v2, which starts where it did. */
	failures += unload(&fib) != -ESTALE;
	failures += symbolize(0x2010) != fib2.name;

	/* One large region over three: more than the room for two, so a count, then a second call. */
	failures += place(&big, 0x1f00, 0x3080) != 0;
	failures += symbolize(0x2500) != big.name || latch_range_size(&map) != 2;
	failures += unload(&sum) != -ENOENT; /* evicted by the store */
	failures += unload(&loop) != -ENOENT;

	signal(SIGPROF, on_sample);
	raise(SIGPROF);
	failures += !sampled;

	/* A JIT that knows only the start: remove reports the record, e.g. to free the code. */
	failures += latch_range_remove(&map, 0x1f00, &r) != 0 || r.value != &big;
	printf("removed %s [%#lx, %#lx)\n", ((const struct code *)r.value)->name,
	       (unsigned long)r.start, (unsigned long)r.end);
	failures += unload(&interp) != 0 || latch_range_size(&map) != 0;
	latch_range_map_destroy(&map);

	printf("code-map: %s\n", failures ? "WRONG" : "all answers right");
	return failures ? 1 : 0;
}
