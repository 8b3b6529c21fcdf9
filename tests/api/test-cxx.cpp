// SPDX-License-Identifier: MIT
// Every public header compiles as C++17 and its inline calls work there.
#include <latch/atomic.h>
#include <latch/range.h>
#include <latch/rbtree.h>
#include <latch/seq.h>
#include <latch/tree.h>
#include <latch/value.h>
#include <latch/visibility.h>

#include <cstdio>
#include <cstdlib>

#define CXX_CHECK(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			std::fprintf(stderr, "CHECK(%s) failed\n", #cond);                         \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

struct params {
	long a;
	char b[5];
};

int main()
{
	static latch_range_map map = LATCH_RANGE_MAP_INIT;
	static LATCH_VALUE(params) value;
	latch_range r{};
	params in{ 7, { 'l', 'a', 't', 'c', 'h' } }, out{};

	r.start = 100;
	r.end = 200;
	CXX_CHECK(latch_range_insert(&map, &r) == 0);
	CXX_CHECK(latch_range_find(&map, 150) == &r);
	CXX_CHECK(latch_range_lower(&map, 500) == &r);
	CXX_CHECK(latch_tree_first(&map.tree) == &r.node && latch_tree_last(&map.tree) == &r.node);
	latch_range_erase(&map, &r);
	CXX_CHECK(latch_range_find(&map, 150) == nullptr);

	latch_value_store(&value, &in);
	latch_value_load(&value, &out);
	CXX_CHECK(out.a == 7 && out.b[4] == 'h');
	std::puts("test-cxx: the public headers work from C++17");
	return 0;
}
