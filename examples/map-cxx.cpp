// SPDX-License-Identifier: MIT
/*
 * map-cxx: a JIT's code regions for its sampling profiler, in C++.  The
 * JIT registers each compiled function by its start address; the SIGPROF
 * handler asks which function holds the interrupted address (the region
 * with the greatest start <= pc, if pc is below its end) while the JIT
 * compiles and throws code away.  The handler never waits, even when it
 * interrupted the JIT in the middle of an update.
 */
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include <latch/map.hpp>

struct code_region {
	std::uint64_t start, end;
	const char *name;
};

static std::optional<latch::map<const code_region *>> regions;
static volatile std::sig_atomic_t samples, resolved;
static volatile std::uint64_t sample_pc;

// The region holding @pc, or null.  Any context: no lock, no allocation.
static const code_region *region_of(std::uint64_t pc) noexcept
{
	auto e = regions->floor(pc);

	return e && pc < e->value->end ? e->value : nullptr;
}

static void on_sample(int)
{
	samples = samples + 1;
	if (region_of(sample_pc))
		resolved = resolved + 1;
}

static const char *name_of(std::uint64_t pc)
{
	const code_region *r = region_of(pc);

	return r ? r->name : "?";
}

int main()
{
	static const code_region interp{ 0x1000, 0x1800, "interpreter" };
	static const code_region hot_v1{ 0x4000, 0x4200, "hot_loop (tier 1)" };
	static const code_region hot_v2{ 0x8000, 0x8100, "hot_loop (tier 2)" };
	static const code_region helper{ 0x8100, 0x8180, "helper" };
	int wrong = 0;

	regions = latch::map<const code_region *>::create();
	if (!regions || !regions->insert(interp.start, &interp) ||
	    !regions->insert(hot_v1.start, &hot_v1))
		return 1;
	std::signal(SIGPROF, on_sample);

	sample_pc = 0x4010;
	std::raise(SIGPROF);
	// Tier up: the new code and its helper appear and the old code goes,
	// all at once for the profiler.
	latch::commit_status c = regions->commit({ { latch::map_op::insert, hot_v2.start, &hot_v2 },
	                                           { latch::map_op::insert, helper.start, &helper },
	                                           { latch::map_op::erase, hot_v1.start } });
	if (!c) {
		std::fprintf(stderr, "map-cxx: change %zu of the tier-up failed\n", c.failed());
		return 1;
	}
	sample_pc = 0x8120;
	std::raise(SIGPROF);

	wrong |= std::strcmp(name_of(0x1234), "interpreter") != 0;
	wrong |= std::strcmp(name_of(0x4010), "?") != 0; // thrown away
	wrong |= std::strcmp(name_of(0x8040), "hot_loop (tier 2)") != 0;
	wrong |= std::strcmp(name_of(0x9000), "?") != 0; // past the last region's end
	wrong |= samples != 2 || resolved != 2;

	for (auto e = regions->first(); e; e = regions->next(e->key))
		std::printf("  %#llx-%#llx %s\n", (unsigned long long)e->key,
		            (unsigned long long)e->value->end, e->value->name);
	std::signal(SIGPROF, SIG_IGN);
	regions.reset(); // no reader can be inside any more
	if (wrong)
		std::fprintf(stderr, "map-cxx: a lookup was wrong\n");
	return wrong;
}
