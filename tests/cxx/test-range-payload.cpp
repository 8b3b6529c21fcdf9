// SPDX-License-Identifier: MIT
/*
 * latch::payload_range_map<T> (<latch/range.hpp>): every member against a
 * std::map model under random operations (insert, erase, erase_if and
 * store, with the bounds an insert collides with and a store evicts); the
 * errors; move-only handles; and lookups from a signal handler that
 * interrupts the writer while it erases ranges and reuses their payload
 * slots at once, each copy checked whole.
 *
 * Overrides: LATCH_CXX_OPS (random operations, default 200000),
 * LATCH_SIGNAL_MS (signal run time, default 300).
 */
#include <latch/range.hpp>

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>

#include "support.hpp"

using std::uintptr_t;

// A 32-byte record: its words tie it to its range and to each other.
struct record {
	std::uint64_t start, serial, check;
	char tag[8];
};

// The record of the range at @start, version @serial.
static record record_of(uintptr_t start, std::uint64_t serial)
{
	record r{ start, serial, (start * 0x9e3779b97f4a7c15u) ^ serial, "rec" };

	r.tag[3] = (char)('0' + serial % 10);
	return r;
}

static bool whole(const record &r)
{
	return r.check == ((r.start * 0x9e3779b97f4a7c15u) ^ r.serial) && r.tag[0] == 'r' &&
	       r.tag[3] == (char)('0' + r.serial % 10);
}

static bool same_record(const record &a, const record &b)
{
	return a.start == b.start && a.serial == b.serial && a.check == b.check;
}

using model_map = latch::payload_range_map<record>;
struct model_entry {
	uintptr_t end;
	record payload;
};
using model = std::map<uintptr_t, model_entry>; // by start

static_assert(noexcept(std::declval<const model_map &>().find(1)), "find is noexcept");
static_assert(noexcept(std::declval<model_map &>().insert(1, 2, record{})), "insert is noexcept");
static_assert(noexcept(model_map::create()), "create is noexcept");
static_assert(!std::is_copy_constructible<model_map>::value, "a map is not copyable");
static_assert(std::is_nothrow_move_constructible<model_map>::value, "a map moves");
static_assert(std::is_nothrow_move_assignable<model_map>::value, "a map moves");
static_assert(std::is_base_of<latch::status, model_map::insert_status>::value,
              "an insert's status is a status");

// The range of @ref that [@start, @end) overlaps with the lowest start, or end().
static model::const_iterator overlap_of(const model &ref, uintptr_t start, uintptr_t end)
{
	auto at = ref.upper_bound(start);

	if (at != ref.begin() && std::prev(at)->second.end > start)
		return std::prev(at);
	return at != ref.end() && at->first < end ? at : ref.end();
}

static void check_find(const model_map &m, const model &ref, uintptr_t addr)
{
	auto got = m.find(addr);
	auto at = ref.upper_bound(addr);
	bool in = at != ref.begin() && std::prev(at)->second.end > addr;

	CHECK(!got == !in, "find(%lu): found %d, expected %d", (unsigned long)addr, !!got, in);
	if (in) {
		auto &want = *std::prev(at);
		CHECK(got->start == want.first && got->end == want.second.end &&
		          same_record(got->payload, want.second.payload),
		      "find(%lu): the range and its payload", (unsigned long)addr);
	}
}

static void check_model(long ops)
{
	auto m = make_empty<model_map>();
	model ref;
	struct test_rng rng = { 7 };
	const uintptr_t space = 4000;

	for (long op = 0; op < ops; op++) {
		uintptr_t start = test_rng_below(&rng, space);
		uintptr_t end = start + 1 + test_rng_below(&rng, 12);
		record p = record_of(start, (std::uint64_t)op);
		auto hit = overlap_of(ref, start, end);

		switch (test_rng_below(&rng, 4)) {
		case 0: {
			auto s = m.insert(start, end, p);

			if (hit == ref.end()) {
				CHECK(s && !s.collision(), "insert");
				ref[start] = { end, p };
			} else {
				CHECK(s.error() == std::errc::file_exists && s.collision() &&
				          s.collision()->start == hit->first &&
				          s.collision()->end == hit->second.end,
				      "insert: the collision's bounds");
			}
			break;
		}
		case 1: {
			auto at = ref.lower_bound(start);

			if (at == ref.end())
				break;
			CHECK(m.erase(at->first), "erase");
			CHECK(m.erase(at->first).error() == std::errc::no_such_file_or_directory,
			      "erase twice");
			ref.erase(at);
			break;
		}
		case 2: {
			auto at = ref.lower_bound(start);

			if (at == ref.end())
				break;
			latch::payload_range<record> stale{ at->first, at->second.end,
				                            record_of(at->first, ~0ull) };
			CHECK(m.erase_if(stale).error() == latch::stale_range,
			      "erase_if, other payload");
			stale.end++;
			stale.payload = at->second.payload;
			CHECK(m.erase_if(stale).error() == latch::stale_range,
			      "erase_if, other end");
			stale.end--;
			CHECK(m.erase_if(stale), "erase_if");
			ref.erase(at);
			break;
		}
		default: {
			latch::range_bounds evicted[16];
			std::size_t want = 0;
			auto s = m.store(start, end, p, evicted, 16);

			for (auto at = hit; at != ref.end() && at->first < end; want++)
				at = ref.erase(at);
			CHECK(s && s.evicted() == want, "store evicted %zu of %zu", s.evicted(),
			      want);
			ref[start] = { end, p };
			break;
		}
		}
		check_find(m, ref, test_rng_below(&rng, space + 16));
		CHECK(m.size() == ref.size(), "size");
	}
	for (uintptr_t a = 0; a < space + 16; a++)
		check_find(m, ref, a);
}

static void check_errors()
{
	auto m = make_empty<model_map>();
	record p = record_of(10, 1);

	CHECK(m.insert(10, 10, p).error() == std::errc::invalid_argument, "empty range");
	CHECK(m.insert(20, 10, p).error() == std::errc::invalid_argument, "reversed range");
	CHECK(m.store(20, 10, p, nullptr, 0).error() == std::errc::invalid_argument,
	      "reversed store");
	CHECK(m.erase(10).error() == std::errc::no_such_file_or_directory, "erase of nothing");
	CHECK(m.erase_if({ 10, 20, p }).error() == std::errc::no_such_file_or_directory,
	      "erase_if of nothing");
	CHECK(m.insert(10, 20, p), "insert");
	auto s = m.store(5, 30, record_of(5, 2), nullptr, 0);
	CHECK(s.error() == std::errc::no_space_on_device && s.evicted() == 1,
	      "store without room for what it evicts");
	CHECK(m.size() == 1 && m.find(15) && same_record(m.find(15)->payload, p),
	      "unchanged after errors");
}

static void check_moves()
{
	auto a = make_empty<model_map>();

	CHECK(a.insert(1, 2, record_of(1, 0)), "insert");
	model_map b(std::move(a));
	CHECK(!a.valid() && b.valid() && b.find(1) && whole(b.find(1)->payload), "moved");
	auto c = make_empty<model_map>();
	c = std::move(b);
	CHECK(!b.valid() && c.valid() && c.size() == 1, "move-assigned");
}

// A timer signal interrupts the writer on its own thread.  Range
// [8i, 8i + 4) is always there, replaced by store() with the next serial
// (its old slot freed and reused at once); [8i + 4, 8i + 6) comes and
// goes.  Every payload the handler copies must be whole and its range's.
static constexpr unsigned storm_ranges = 1000;
static std::optional<model_map> storm_map;

static void on_tick(int)
{
	static unsigned i;
	uintptr_t base = 8 * (uintptr_t)(i++ % storm_ranges);
	auto r = storm_map->find(base + 3);

	SIG_CHECK(r && r->start == base && r->end == base + 4 && r->payload.start == base &&
	              whole(r->payload),
	          "a stable range and its payload whole");
	auto c = storm_map->find(base + 5);
	SIG_CHECK(!c || (c->start == base + 4 && c->payload.start == base + 4 && whole(c->payload)),
	          "a churning range and its payload whole");
	SIG_CHECK(!storm_map->find(base + 6), "find in a gap");
}

static void check_signal(long ms)
{
	struct test_rng rng = { 99 };
	bool present[storm_ranges] = {};

	storm_map = model_map::create();
	CHECK(storm_map, "create");
	for (unsigned i = 0; i < storm_ranges; i++)
		CHECK(storm_map->insert(8 * (uintptr_t)i, 8 * (uintptr_t)i + 4,
		                        record_of(8 * (uintptr_t)i, 0)),
		      "insert");
	storm_run<on_tick>(ms, [&](unsigned long u) {
		unsigned i = (unsigned)test_rng_below(&rng, storm_ranges);
		uintptr_t k = 8 * (uintptr_t)i;

		if (u % 2) {
			latch::range_bounds old[1];
			auto s = storm_map->store(k, k + 4, record_of(k, u), old, 1);
			CHECK(s && s.evicted() == 1 && old[0].start == k && old[0].end == k + 4,
			      "store over a stable range");
		} else {
			CHECK(present[i] ? storm_map->erase(k + 4)
			                 : storm_map->insert(k + 4, k + 6, record_of(k + 4, u)),
			      "toggle");
			present[i] = !present[i];
		}
	});
	storm_map.reset();
}

int main()
{
	check_model(test_env_long("LATCH_CXX_OPS", 200000));
	check_errors();
	check_moves();
	check_signal(test_env_long("LATCH_SIGNAL_MS", 300));
	std::puts("test-range-payload-cxx: latch::payload_range_map agrees with std::map, in every "
	          "context");
	return 0;
}
