// SPDX-License-Identifier: MIT
// Every public header compiles as C++17 and its inline calls work there.
// A latched value takes trivially copyable types that C has no word for
// (default member initialisers, a user-provided default constructor), and
// its calls evaluate each argument once.  (A type that is not trivially
// copyable must not compile: test-value-rejects-cxx-not-trivially-copyable.)
#include <latch/atomic.h>
#include <latch/range.h>
#include <latch/rbtree.h>
#include <latch/seq.h>
#include <latch/tree.h>
#include <latch/value.h>
#include <latch/visibility.h>

#include <cstdint>
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

// Trivially copyable, with default member initialisers.
struct calibration {
	std::uint64_t base = 0;
	std::uint32_t mult = 1;
};

// Trivially copyable, with a user-provided default constructor.
struct counter {
	counter() : count(42)
	{
	}
	long count;
};

// The initial value is all zero bytes, whatever T's constructor would do;
// a stored value loads back, and each argument is evaluated once.
static int check_value_types()
{
	static LATCH_VALUE(calibration) cal;
	static LATCH_VALUE(counter) counters[3];
	calibration c;
	counter n;
	int i = 0;

	latch_value_load(&cal, &c);
	CXX_CHECK(c.base == 0 && c.mult == 0);
	c.base = 123456789;
	c.mult = 3;
	latch_value_store(&cal, &c);
	c = calibration();
	latch_value_load(&cal, &c);
	CXX_CHECK(c.base == 123456789 && c.mult == 3);

	latch_value_load(&counters[0], &n);
	CXX_CHECK(n.count == 0);
	n.count = 7;
	latch_value_store(&counters[i++], &n);
	CXX_CHECK(i == 1);
	n = counter();
	latch_value_load(&counters[--i], &n);
	CXX_CHECK(i == 0 && n.count == 7);
	return 0;
}

int main()
{
	static latch_range_map map;
	static LATCH_VALUE(params) value;
	latch_range r{};
	params in{ 7, { 'l', 'a', 't', 'c', 'h' } }, out{};

	CXX_CHECK(latch_range_map_init(&map) == 0);
	CXX_CHECK(latch_range_insert(&map, 100, 200, &map, nullptr) == 0);
	CXX_CHECK(latch_range_find(&map, 150, &r) && r.start == 100 && r.end == 200 &&
	          r.value == &map);
	CXX_CHECK(latch_range_floor(&map, 500, nullptr) && latch_range_first(&map, &r) &&
	          !latch_range_next(&map, r.start, nullptr) && latch_range_size(&map) == 1);
	CXX_CHECK(latch_range_last(&map, &r) && r.start == 100 &&
	          !latch_range_prev(&map, r.start, nullptr));
	CXX_CHECK(latch_range_erase(&map, 100) == 0);
	CXX_CHECK(!latch_range_find(&map, 150, nullptr));
	latch_range_map_destroy(&map);

	latch_value_store(&value, &in);
	latch_value_load(&value, &out);
	CXX_CHECK(out.a == 7 && out.b[4] == 'h');
	CXX_CHECK(check_value_types() == 0);
	std::puts("test-cxx: the public headers work from C++17");
	return 0;
}
