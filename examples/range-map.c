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

static struct latch_range_map code;

/* Any context: returns the name of the blob holding @pc, or NULL. */
static const char *symbolize(uintptr_t pc)
{
	struct latch_range r;

	/* The map copies the range out: the caller's memory is never touched here. */
	return latch_range_find(&code, pc, &r) ? r.value : NULL;
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
	static const struct latch_range blobs[] = {
		{ 0x1000, 0x1800, "interp_loop" },
		{ 0x2000, 0x2400, "jit_fib" },
		{ 0x3000, 0x3100, "jit_sum" },
	};
	struct latch_range hit, r;
	size_t failed;
	int failures = 0;

	failures += latch_range_map_init(&code) != 0;
	/* Bulk load, sorted by start: one O(n) build. */
	failures += latch_range_load_sorted(&code, blobs, 3, &failed) != 0;
	/* Misuse is refused and leaves the map as it was. */
	failures += latch_range_insert(&code, 0x17f0, 0x1900, "bad", &hit) != -EEXIST;
	printf("[0x17f0, 0x1900) overlaps %s\n", (const char *)hit.value);
	failures += hit.start != 0x1000;
	failures += latch_range_insert(&code, 0x5000, 0x5000, "empty", NULL) != -EINVAL;

	printf("0x2010 -> %s\n", symbolize(0x2010));
	printf("0x2400 -> %s (end is excluded)\n", symbolize(0x2400) ? "found" : "none");
	failures += symbolize(0x2010) != blobs[1].value || symbolize(0x2400) != NULL;
	failures += symbolize(0x17f8) != blobs[0].value || symbolize(0x0fff) != NULL;
	/* floor: the blob starting at or before an address, even past its end. */
	failures += !latch_range_floor(&code, 0x2500, &r) || r.start != 0x2000;
	failures += !latch_range_floor(&code, 0x9000, &r) || r.start != 0x3000;
	/* A walk in address order. */
	for (bool more = latch_range_first(&code, &r); more;
	     more = latch_range_next(&code, r.start, &r))
		printf("  [%#lx, %#lx) %s\n", (unsigned long)r.start, (unsigned long)r.end,
		       (const char *)r.value);

	signal(SIGPROF, on_sample);
	raise(SIGPROF);
	failures += !sample_ok;

	/* Unregister; in a real JIT the blob's memory waits for a grace period. */
	failures += latch_range_erase(&code, 0x2000) != 0;
	failures += latch_range_erase(&code, 0x2000) != -ENOENT; /* no longer in the map */
	failures += symbolize(0x2010) != NULL || latch_range_size(&code) != 2;
	latch_range_map_destroy(&code);

	printf("range-map: %s\n", failures ? "WRONG" : "all answers right");
	return failures ? 1 : 0;
}
