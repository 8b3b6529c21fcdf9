// SPDX-License-Identifier: MIT
// The consumer, compiled as C++17: the public headers and their inline
// code must work for C++ programs too, and so must the C++ wrappers,
// which consumer.c's main() calls through cxx_wrappers().
#include <latch/map.hpp>
#include <latch/range.hpp>
#include <latch/value.hpp>

#include <cstdio>

// latch::map, latch::range_map and latch::value give back what they were given.
static int cxx_wrappers()
{
	static latch::value<long> setting;
	auto m = latch::map<long>::create();
	auto r = latch::range_map<long>::create();

	setting.store(-3);
	bool map_ok =
	    m && m->insert(7, setting.load()) &&
	    m->commit({ { latch::map_op::insert, 9, 90 }, { latch::map_op::erase, 7 } }) &&
	    !m->find(7) && m->floor(10)->value == 90 && m->size() == 1;
	bool range_ok = r && r->insert(0x1000, 0x2000, setting.load()) &&
	                r->insert(0x1800, 0x1900, 0).collision()->start == 0x1000 &&
	                r->find(0x1fff)->value == -3 && !r->find(0x2000) && r->size() == 1;
	if (!map_ok || !range_ok) {
		std::fprintf(stderr, "consumer: the C++ wrappers gave a wrong answer\n");
		return 1;
	}
	return 0;
}

#include "consumer.c"
