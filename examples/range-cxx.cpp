// SPDX-License-Identifier: MIT
/*
 * range-cxx: a process's loaded modules for its sampling profiler, in C++.
 * The loader registers each module's address range; the SIGPROF handler
 * asks which module holds the interrupted address while modules are
 * loaded, unloaded and replaced.  The handler never waits, even when it
 * interrupted the loader in the middle of an update, and a module whose
 * range overlaps a loaded one is refused with the module it overlaps.
 */
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include <latch/range.hpp>

struct module {
	const char *name;
};

static std::optional<latch::range_map<const module *>> modules;
static volatile std::sig_atomic_t samples, resolved;
static volatile std::uintptr_t sample_pc;

// The name of the module holding @pc, or "?".  Any context: no lock, no allocation.
static const char *name_of(std::uintptr_t pc) noexcept
{
	auto r = modules->find(pc);

	return r ? r->value->name : "?";
}

static void on_sample(int)
{
	samples = samples + 1;
	if (modules->find(sample_pc))
		resolved = resolved + 1;
}

int main()
{
	static const module exe{ "a.out" }, libc{ "libc.so.6" }, plugin_v1{ "plugin.so (v1)" },
	    plugin_v2{ "plugin.so (v2)" }, stray{ "stray.so" };
	int wrong = 0;

	modules = latch::range_map<const module *>::create();
	// The modules there at start, sorted by address, in one load.
	if (!modules ||
	    !modules->load_sorted({ { 0x400000, 0x480000, &exe }, { 0x7f0000, 0x9a0000, &libc } }))
		return 1;
	std::signal(SIGPROF, on_sample);

	if (!modules->insert(0x500000, 0x540000, &plugin_v1))
		return 1;
	sample_pc = 0x510000;
	std::raise(SIGPROF);

	// A module mapped over libc is refused, and the answer says by what.
	auto s = modules->insert(0x900000, 0xa00000, &stray);
	if (s || !s.collision()) {
		std::fprintf(stderr, "range-cxx: an overlapping module was accepted\n");
		return 1;
	}
	std::printf("refused %s: overlaps %s at %#lx\n", stray.name, s.collision()->value->name,
	            (unsigned long)s.collision()->start);

	// Reload the plugin, larger: for the profiler the old one goes and the
	// new one appears at once, with no moment without a plugin.
	latch::commit_status c =
	    modules->commit({ { latch::range_op::erase, 0x500000 },
	                      { latch::range_op::insert, 0x500000, 0x560000, &plugin_v2 } });
	if (!c) {
		std::fprintf(stderr, "range-cxx: change %zu of the reload failed\n", c.failed());
		return 1;
	}
	sample_pc = 0x550000;
	std::raise(SIGPROF);

	wrong |= std::strcmp(name_of(0x400123), "a.out") != 0;
	wrong |= std::strcmp(name_of(0x480000), "?") != 0; // ends are not in the range
	wrong |= std::strcmp(name_of(0x510000), "plugin.so (v2)") != 0;
	wrong |= std::strcmp(name_of(0x9a0000), "?") != 0;
	wrong |= samples != 2 || resolved != 2;

	for (auto r = modules->first(); r; r = modules->next(r->start))
		std::printf("  %#lx-%#lx %s\n", (unsigned long)r->start, (unsigned long)r->end,
		            r->value->name);
	std::signal(SIGPROF, SIG_IGN);
	modules.reset(); // no reader can be inside any more
	if (wrong)
		std::fprintf(stderr, "range-cxx: a lookup was wrong\n");
	return wrong;
}
