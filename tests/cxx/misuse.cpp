// SPDX-License-Identifier: MIT
/*
 * Value types the C++ wrappers must refuse at compile time, each with a
 * message that says why (CMakeLists.txt names it): compiled with
 * -DMISUSE=n for case n, and without, when it must compile cleanly.
 */
#include <latch/map.hpp>
#include <latch/range.hpp>
#include <latch/value.hpp>

#include <string>

struct two_words {
	void *a, *b;
};

struct counted { // small, but copying it runs code
	counted() = default;
	counted(const counted &) noexcept
	{
	}
	int n = 0;
};

struct no_default { // small and trivially copyable, but a reader cannot make one
	explicit no_default(int v) : n(v)
	{
	}
	int n;
};

#if MISUSE == 1
using refused = latch::map<two_words>;
#elif MISUSE == 2
using refused = latch::map<counted>;
#elif MISUSE == 3
using refused = latch::map<no_default>;
#elif MISUSE == 4
using refused = latch::value<std::string>;
#elif MISUSE == 5
using refused = latch::range_map<two_words>;
#elif MISUSE == 6
using refused = latch::range_map<counted>;
#elif MISUSE == 7
using refused = latch::payload_range_map<int>;
#elif MISUSE == 8
using refused = latch::payload_range_map<char[264]>;
#elif MISUSE == 9
using refused = latch::payload_range_map<std::string>;
#else
using refused = latch::map<int>;
#endif

int main()
{
	auto m = latch::map<int>::create();

	return m && sizeof(refused) > 0 ? 0 : 1; // sizeof instantiates the type
}
