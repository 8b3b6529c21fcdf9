/* SPDX-License-Identifier: MIT */
/*
 * range-map: which code blob holds this address?  A JIT registers the
 * blobs it emits; a profiler's signal handler resolves sampled program
 * counters, even when the sample interrupted the JIT while it was
 * registering a blob.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>

#include <latch/range.h>

struct blob {
	struct latch_range range; /* [start, end), fixed while registered */
	const char *name;
};

static struct latch_range_map code = LATCH_RANGE_MAP_INIT;

/* Any context: returns the name of the blob holding @pc, or NULL. */
static const char *symbolize(uintptr_t pc)
{
	struct latch_range *r = latch_range_find(&code, pc);

	return r ? latch_tree_entry(r, struct blob, range)->name : NULL;
}

static volatile sig_atomic_t sample_ok;

static void on_sample(int sig)
{
	(void)sig;
	/* Safe here: latch_range_find() never waits and takes no lock. */
	sample_ok = symbolize(0x2010) != NULL;
}

int main(void)
{
	static struct blob blobs[] = {
		{ .range = { .start = 0x1000, .end = 0x1800 }, .name = "interp_loop" },
		{ .range = { .start = 0x2000, .end = 0x2400 }, .name = "jit_fib" },
		{ .range = { .start = 0x3000, .end = 0x3100 }, .name = "jit_sum" },
	};
	struct blob overlapping = { .range = { .start = 0x17f0, .end = 0x1900 }, .name = "bad" };
	struct blob empty = { .range = { .start = 0x5000, .end = 0x5000 }, .name = "empty" };
	int failures = 0;

	for (int i = 0; i < 3; i++)
		failures += latch_range_insert(&code, &blobs[i].range) != 0;
	/* Misuse is refused and leaves the map as it was. */
	failures += latch_range_insert(&code, &overlapping.range) != -EEXIST;
	failures += latch_range_insert(&code, &empty.range) != -EINVAL;

	printf("0x2010 -> %s\n", symbolize(0x2010));
	printf("0x2400 -> %s (end is excluded)\n", symbolize(0x2400) ? "found" : "none");
	failures += symbolize(0x2010) != blobs[1].name || symbolize(0x2400) != NULL;
	failures += symbolize(0x17f8) != blobs[0].name || symbolize(0x0fff) != NULL;
	/* lower: the blob starting at or before an address, even past its end. */
	failures += latch_range_lower(&code, 0x2500) != &blobs[1].range;
	failures += latch_range_lower(&code, 0x9000) != &blobs[2].range;

	signal(SIGPROF, on_sample);
	raise(SIGPROF);
	failures += !sample_ok;

	/* Unregister; in a real JIT the memory waits for a grace period. */
	failures += latch_range_erase(&code, &blobs[1].range) != 0;
	failures += latch_range_erase(&code, &blobs[1].range) != -ENOENT; /* no longer in the map */
	failures += symbolize(0x2010) != NULL;

	printf("range-map: %s\n", failures ? "WRONG" : "all answers right");
	return failures ? 1 : 0;
}
