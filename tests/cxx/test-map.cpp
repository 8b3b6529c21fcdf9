// SPDX-License-Identifier: MIT
/*
 * latch::map<V> (<latch/map.hpp>): every member against a std::map model
 * under random operations, single and batched (remove among them); the
 * errors, the value a remove reports and the failed index of a batch;
 * value types other than pointers; move-only handles; and lookups from a
 * signal handler that interrupts the writer.
 *
 * Overrides: LATCH_CXX_OPS (random operations, default 200000),
 * LATCH_SIGNAL_MS (signal run time, default 300).
 */
#include <latch/map.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "support.hpp"

using std::uint64_t;
using std::uintptr_t;

// The model's value type: 32 bits, so the map keeps half a word.
using model_map = latch::map<std::uint32_t>;
using model = std::map<uint64_t, std::uint32_t>;

// The readers compile to noexcept calls; the handle is move-only.
static_assert(noexcept(std::declval<const model_map &>().find(1)), "find is noexcept");
static_assert(noexcept(std::declval<const model_map &>().floor(1)), "floor is noexcept");
static_assert(noexcept(std::declval<model_map &>().insert(1, 2)), "insert is noexcept");
static_assert(noexcept(model_map::create()), "create is noexcept");
static_assert(!std::is_copy_constructible<model_map>::value, "a map is not copyable");
static_assert(!std::is_copy_assignable<model_map>::value, "a map is not copyable");
static_assert(std::is_nothrow_move_constructible<model_map>::value, "a map moves");
static_assert(std::is_nothrow_move_assignable<model_map>::value, "a map moves");

static bool same(const std::optional<latch::entry<std::uint32_t>> &got, model::const_iterator want,
                 const model &ref)
{
	if (want == ref.end())
		return !got;
	return got && got->key == want->first && got->value == want->second;
}

// Every reader agrees with @ref at @key, and size, empty, first and last.
static void check_at(const model_map &m, const model &ref, uint64_t key)
{
	auto at = ref.find(key), up = ref.upper_bound(key), low = ref.lower_bound(key);
	std::optional<std::uint32_t> v = m.find(key);

	CHECK(at == ref.end() ? !v : v && *v == at->second, "find(%llu)", (unsigned long long)key);
	CHECK(same(m.ceil(key), low, ref), "ceil(%llu)", (unsigned long long)key);
	CHECK(same(m.next(key), up, ref), "next(%llu)", (unsigned long long)key);
	CHECK(same(m.floor(key), up == ref.begin() ? ref.end() : std::prev(up), ref), "floor(%llu)",
	      (unsigned long long)key);
	CHECK(same(m.prev(key), low == ref.begin() ? ref.end() : std::prev(low), ref), "prev(%llu)",
	      (unsigned long long)key);
	CHECK(m.size() == ref.size() && m.empty() == ref.empty(), "size");
	CHECK(same(m.first(), ref.begin(), ref), "first");
	CHECK(same(m.last(), ref.empty() ? ref.end() : std::prev(ref.end()), ref), "last");
}

// What commit() must answer for @changes on @ref, which it updates on success.
static latch::commit_status model_commit(model &ref, const std::vector<model_map::change> &changes)
{
	model after = ref;

	for (std::size_t i = 0; i < changes.size(); i++) {
		const model_map::change &c = changes[i];
		bool present = after.count(c.key) != 0;
		std::errc e{};

		if (c.op == latch::map_op::insert && !present)
			after[c.key] = c.value;
		else if (c.op == latch::map_op::erase && present)
			after.erase(c.key);
		else if (c.op == latch::map_op::replace && present)
			after[c.key] = c.value;
		else if (c.op == latch::map_op::insert)
			e = std::errc::file_exists;
		else if (c.op == latch::map_op::erase || c.op == latch::map_op::replace)
			e = std::errc::no_such_file_or_directory;
		else
			e = std::errc::invalid_argument;
		if (e != std::errc{})
			return latch::commit_status(latch::status(e), i);
	}
	ref = std::move(after);
	return latch::commit_status(latch::status(), changes.size());
}

// Random single changes, batches and reloads over a small key space, so
// that every kind of error happens often.
static void check_model(long ops)
{
	model_map m = make_empty<model_map>();
	model ref;
	struct test_rng rng = { 12345 };
	const uint64_t keys = 2000;

	for (long op = 0; op < ops; op++) {
		uint64_t key = test_rng_below(&rng, keys);
		std::uint32_t value = (std::uint32_t)test_rng_next(&rng);
		bool present = ref.count(key) != 0;
		unsigned what = (unsigned)test_rng_below(&rng, 1000);

		if (what < 400) {
			latch::status s = m.insert(key, value);

			CHECK(s.ok() == !present &&
			          s.error() == (present ? std::errc::file_exists : std::errc{}),
			      "insert");
			ref.emplace(key, value);
		} else if (what < 700 && what % 3 == 0) {
			auto at = ref.find(key);
			std::optional<std::uint32_t> got = m.remove(key);

			CHECK(bool(got) == present && (!got || *got == at->second), "remove");
			ref.erase(key);
		} else if (what < 700) {
			latch::status s = m.erase(key);

			CHECK(bool(s) == present &&
			          (present || s.error() == std::errc::no_such_file_or_directory),
			      "erase");
			ref.erase(key);
		} else if (what < 850) {
			latch::status s = m.replace(key, value);

			CHECK(bool(s) == present &&
			          (present || s.error() == std::errc::no_such_file_or_directory),
			      "replace");
			if (present)
				ref[key] = value;
		} else if (what < 995) {
			std::vector<model_map::change> batch(test_rng_below(&rng, 6));

			for (model_map::change &c : batch) {
				unsigned kind = (unsigned)test_rng_below(&rng, 61);

				c.op = kind == 60 ? static_cast<latch::map_op>(7)
				                  : static_cast<latch::map_op>(kind % 3);
				c.key = test_rng_below(&rng, keys);
				c.value = (std::uint32_t)test_rng_next(&rng);
			}
			latch::commit_status want = model_commit(ref, batch);
			latch::commit_status got = m.commit(batch);

			CHECK(got.error() == want.error() && got.failed() == want.failed(),
			      "commit: error %d at %zu, want %d at %zu", (int)got.error(),
			      got.failed(), (int)want.error(), want.failed());
		} else {
			// Reload what is there, with every value changed.
			std::vector<uint64_t> k;
			std::vector<std::uint32_t> v;

			for (auto &e : ref) {
				k.push_back(e.first);
				v.push_back(e.second = ~e.second);
			}
			CHECK(m.load_sorted(k, v), "load_sorted");
		}
		check_at(m, ref, key);
	}
	// A walk by next() from first() and one by prev() from last() see it all.
	auto it = ref.begin();
	for (auto e = m.first(); e; e = m.next(e->key), ++it)
		CHECK(it != ref.end() && e->key == it->first && e->value == it->second, "walk");
	CHECK(it == ref.end(), "walk: the map ended early");
	auto rit = ref.rbegin();
	for (auto e = m.last(); e; e = m.prev(e->key), ++rit)
		CHECK(rit != ref.rend() && e->key == rit->first, "walk back");
	CHECK(rit == ref.rend(), "walk back: the map ended early");
	// find_many() answers as the model, past a group of 64.
	std::vector<uint64_t> probe(150);
	std::vector<std::optional<std::uint32_t>> got(probe.size());
	std::size_t want = 0;

	for (uint64_t &k : probe)
		k = test_rng_below(&rng, keys + 10);
	std::size_t hits = m.find_many(probe, got.data());
	for (std::size_t i = 0; i < probe.size(); i++) {
		auto at = ref.find(probe[i]);

		CHECK(at == ref.end() ? !got[i] : got[i] == at->second, "find_many(%llu)",
		      (unsigned long long)probe[i]);
		want += at != ref.end();
	}
	CHECK(hits == want, "find_many: %zu hits, the model has %zu", hits, want);
}

// Errors leave the map as it was; a batch names its first bad change.
static void check_errors()
{
	model_map m = make_empty<model_map>();
	model ref;

	CHECK(m.reserve(100), "reserve");
	CHECK(m.insert(10, 1) && m.insert(20, 2), "insert");
	ref = { { 10, 1 }, { 20, 2 } };
	CHECK(m.insert(10, 9).error() == std::errc::file_exists, "insert present");
	CHECK(m.erase(15).error() == std::errc::no_such_file_or_directory, "erase absent");
	CHECK(m.replace(15, 9).error() == std::errc::no_such_file_or_directory, "replace absent");

	// A braced list of changes; the third is bad, so none applies.
	latch::commit_status c = m.commit({ { latch::map_op::insert, 30, 3 },
	                                    { latch::map_op::erase, 10 },
	                                    { latch::map_op::replace, 10, 5 } });
	CHECK(!c && c.error() == std::errc::no_such_file_or_directory && c.failed() == 2,
	      "commit: the replace of an erased key");
	model_map::change bad[] = { { latch::map_op::replace, 20, 7 },
		                    { static_cast<latch::map_op>(-1), 20, 0 } };
	c = m.commit(bad);
	CHECK(c.error() == std::errc::invalid_argument && c.failed() == 1, "commit: unknown op");
	check_at(m, ref, 20);

	// Keys not strictly increasing, or as many values as keys.
	const uint64_t unsorted[] = { 1, 3, 3 };
	const std::uint32_t three[] = { 1, 2, 3 };
	CHECK(m.load_sorted(unsorted, three).error() == std::errc::invalid_argument, "unsorted");
	CHECK(m.load_sorted({ 1, 2 }, three).error() == std::errc::invalid_argument, "sizes");
	check_at(m, ref, 10);

	// Empty batches and an empty reload are fine.
	c = m.commit(latch::array_view<model_map::change>(nullptr, 0));
	CHECK(c && c.failed() == 0, "empty commit");
	CHECK(m.load_sorted(latch::array_view<uint64_t>(nullptr, 0), {}), "empty reload");
	CHECK(m.empty() && !m.first() && !m.last() && !m.floor(~0ull) && !m.ceil(0), "emptied");
}

// Moving a handle moves ownership; the moved-from handle is empty and may
// be destroyed or assigned to.
static void check_moves()
{
	model_map a = make_empty<model_map>();

	CHECK(a.insert(1, 100), "insert");
	model_map b(std::move(a));
	CHECK(!a.valid() && b.valid() && b.find(1) == 100u, "move construction");

	model_map c = make_empty<model_map>();
	CHECK(c.insert(2, 200), "insert");
	c = std::move(b); // the map c held is destroyed
	CHECK(!b.valid() && c.valid() && c.find(1) == 100u && !c.find(2), "move assignment");
	b = std::move(c); // a moved-from handle takes a map
	CHECK(b.valid() && !c.valid() && b.find(1) == 100u, "assignment to a moved-from handle");

	// A vector of maps moves them as it grows; every map is still whole.
	std::vector<model_map> maps;
	for (std::uint32_t i = 0; i < 20; i++) {
		maps.push_back(make_empty<model_map>());
		CHECK(maps.back().insert(i, i), "insert");
	}
	for (std::uint32_t i = 0; i < 20; i++)
		CHECK(maps[i].size() == 1 && maps[i].find(i) == i, "map %u after the moves", i);
} // a and c, moved from, are destroyed here

// Values that are not 32-bit integers: each kind keeps its bytes.
enum class colour : unsigned char { red = 1, green = 2 };

static void check_value_types()
{
	auto names = latch::map<const char *>::create();
	static const char *const text[] = { "zero", "one", "two" };
	CHECK(names && names->load_sorted({ 0, 1, 2 }, text), "load_sorted of pointers");
	CHECK(names->floor(7)->value == text[2] && names->find(1) == text[1], "pointers");

	// void *: load_sorted hands the values over as they are.
	auto raw = latch::map<>::create();
	int x = 0, y = 0;
	std::array<void *, 2> ptrs = { &x, &y };
	std::array<uint64_t, 2> at = { 5, 6 };
	CHECK(raw && raw->load_sorted(at, ptrs) && raw->find(6) == &y && raw->size() == 2,
	      "void *");

	auto colours = latch::map<colour>::create();
	CHECK(colours && colours->insert(3, colour::green) && colours->find(3) == colour::green,
	      "enum");
	CHECK(colours->commit({ { latch::map_op::replace, 3, colour::red } }) &&
	          colours->ceil(1)->value == colour::red,
	      "enum in a one-change batch");

	auto smalls = latch::map<small>::create();
	CHECK(smalls && smalls->insert(9, small{ 0xbeef, 7 }), "insert a struct");
	CHECK(smalls->find(9) == (small{ 0xbeef, 7 }) &&
	          smalls->last()->value == (small{ 0xbeef, 7 }),
	      "struct");

	// A whole word: 32 bits on a 32-bit target, where 64 would not fit.
	auto words = latch::map<uintptr_t>::create();
	CHECK(words && words->insert(~0ull, UINTPTR_MAX) && words->prev(~0ull) == std::nullopt &&
	          words->find(~0ull) == UINTPTR_MAX,
	      "a whole word");
}

// A timer signal interrupts the writer on its own thread; the handler's
// lookups must be right whatever the writer was doing.  Keys 4i are always
// present, with value 4i + 1 or 4i + 2; 4i + 1 come and go (value 4i + 3);
// 4i + 2 never exist.  The values are words (uintptr_t), which every
// target's map holds; they stay below 4 * storm_keys + 8.
static constexpr unsigned storm_keys = 2000;
static std::optional<latch::map<uintptr_t>> storm_map;

static void on_tick(int)
{
	static unsigned i;
	uintptr_t key = 4 * (uintptr_t)(i++ % storm_keys);
	std::optional<uintptr_t> v = storm_map->find(key);

	SIG_CHECK(v && (*v == key + 1 || *v == key + 2), "find of a stable key");
	SIG_CHECK(!storm_map->find(key + 2), "find of a key never present");
	auto f = storm_map->floor(key + 2);
	SIG_CHECK(f && (f->key == key || (f->key == key + 1 && f->value == key + 4)), "floor");
	auto n = storm_map->next(key);
	SIG_CHECK(!n || n->key == key + 1 || n->key == key + 4, "next");
	SIG_CHECK(storm_map->size() >= storm_keys, "size");
}

static void check_signal(long ms)
{
	struct test_rng rng = { 99 };
	std::vector<uint64_t> keys;
	std::vector<uintptr_t> values;
	bool present[storm_keys] = {};

	storm_map = latch::map<uintptr_t>::create();
	CHECK(storm_map, "create");
	for (unsigned i = 0; i < storm_keys; i++) {
		keys.push_back(4 * (uint64_t)i);
		values.push_back(4 * (uintptr_t)i + 1);
	}
	CHECK(storm_map->load_sorted(keys, values), "load_sorted");
	storm_run<on_tick>(ms, [&](unsigned long u) {
		unsigned i = (unsigned)test_rng_below(&rng, storm_keys - 1);
		uintptr_t k = 4 * (uintptr_t)i;

		if (u % 8 == 7) {
			// Toggle two neighbours' churn keys and flip a value, at once.
			latch::map_op toggle[2];
			for (unsigned j = 0; j < 2; j++) {
				toggle[j] =
				    present[i + j] ? latch::map_op::erase : latch::map_op::insert;
				present[i + j] = !present[i + j];
			}
			CHECK(storm_map->commit({ { toggle[0], k + 1, k + 4 },
			                          { toggle[1], k + 5, k + 8 },
			                          { latch::map_op::replace, k, k + 1 + u % 2 } }),
			      "commit");
		} else if (u % 2) {
			CHECK(storm_map->replace(k, k + 1 + u / 2 % 2), "replace");
		} else {
			CHECK(present[i] ? storm_map->erase(k + 1)
			                 : storm_map->insert(k + 1, k + 4),
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
	check_value_types();
	check_signal(test_env_long("LATCH_SIGNAL_MS", 300));
	std::puts("test-map-cxx: latch::map agrees with std::map, in every context");
	return 0;
}
