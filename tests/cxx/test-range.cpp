// SPDX-License-Identifier: MIT
/*
 * latch::range_map<V> (<latch/range.hpp>): every member against a std::map
 * model under random operations, single and batched (remove, erase_if
 * and store among them); the errors, the collision an insert reports, the
 * range a remove reports, the ranges a store evicts, and the failed index
 * of a batch or a load;
 * value types other than pointers; move-only handles; and lookups from a
 * signal handler that interrupts the writer.
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
#include <vector>

#include "support.hpp"

using std::uintptr_t;

// The model's value type: 32 bits, so the map keeps half a word.
using model_map = latch::range_map<std::uint32_t>;
using model_range = latch::range<std::uint32_t>;
using model = std::map<uintptr_t, model_range>; // by start

// The readers compile to noexcept calls; the handle is move-only.
static_assert(noexcept(std::declval<const model_map &>().find(1)), "find is noexcept");
static_assert(noexcept(std::declval<const model_map &>().floor(1)), "floor is noexcept");
static_assert(noexcept(std::declval<model_map &>().insert(1, 2, 3)), "insert is noexcept");
static_assert(noexcept(model_map::create()), "create is noexcept");
static_assert(noexcept(std::declval<model_map &>().store(1, 2, 3, nullptr, 0)),
              "store is noexcept");
static_assert(!std::is_copy_constructible<model_map>::value, "a map is not copyable");
static_assert(!std::is_copy_assignable<model_map>::value, "a map is not copyable");
static_assert(std::is_nothrow_move_constructible<model_map>::value, "a map moves");
static_assert(std::is_nothrow_move_assignable<model_map>::value, "a map moves");
static_assert(std::is_base_of<latch::status, model_map::insert_status>::value,
              "an insert's status is a status");

static bool same_range(const std::optional<model_range> &got, const model_range &want)
{
	return got && got->start == want.start && got->end == want.end && got->value == want.value;
}

static bool same(const std::optional<model_range> &got, model::const_iterator want,
                 const model &ref)
{
	return want == ref.end() ? !got : same_range(got, want->second);
}

// The range of @ref with the greatest start <= @addr, or end().
static model::const_iterator floor_of(const model &ref, uintptr_t addr)
{
	auto up = ref.upper_bound(addr);

	return up == ref.begin() ? ref.end() : std::prev(up);
}

// The range of @ref with the greatest start < @start, or end().
static model::const_iterator before_of(const model &ref, uintptr_t start)
{
	auto at = ref.lower_bound(start);

	return at == ref.begin() ? ref.end() : std::prev(at);
}

// The range of @ref that [@start, @end) overlaps with the lowest start, or end().
static model::const_iterator overlap_of(const model &ref, uintptr_t start, uintptr_t end)
{
	auto low = floor_of(ref, start);

	if (low != ref.end() && low->second.end > start)
		return low;
	auto up = ref.upper_bound(start);
	return up != ref.end() && up->first < end ? up : ref.end();
}

// The ranges of @ref that [@start, @end) overlaps, in start order.
static std::vector<model_range> overlapping(const model &ref, uintptr_t start, uintptr_t end)
{
	std::vector<model_range> out;

	for (auto it = overlap_of(ref, start, end); it != ref.end() && it->first < end; ++it)
		out.push_back(it->second);
	return out;
}

// Every reader agrees with @ref at @addr, and size, empty, first and last.
static void check_at(const model_map &m, const model &ref, uintptr_t addr)
{
	auto low = floor_of(ref, addr);
	auto holder = low != ref.end() && addr < low->second.end ? low : ref.end();

	CHECK(same(m.find(addr), holder, ref), "find(%#lx)", (unsigned long)addr);
	CHECK(same(m.floor(addr), low, ref), "floor(%#lx)", (unsigned long)addr);
	CHECK(same(m.ceil(addr), ref.lower_bound(addr), ref), "ceil(%#lx)", (unsigned long)addr);
	CHECK(same(m.next(addr), ref.upper_bound(addr), ref), "next(%#lx)", (unsigned long)addr);
	CHECK(same(m.prev(addr), before_of(ref, addr), ref), "prev(%#lx)", (unsigned long)addr);
	CHECK(m.size() == ref.size() && m.empty() == ref.empty(), "size");
	CHECK(same(m.first(), ref.begin(), ref), "first");
	CHECK(same(m.last(), ref.empty() ? ref.end() : std::prev(ref.end()), ref), "last");
}

// What insert() must answer on @ref, which it updates on success.
static latch::status model_insert(model &ref, const model_range &r)
{
	if (r.start >= r.end)
		return latch::status(std::errc::invalid_argument);
	if (overlap_of(ref, r.start, r.end) != ref.end())
		return latch::status(std::errc::file_exists);
	ref[r.start] = r;
	return latch::status();
}

// What erase_if() must answer on @ref, which it updates on success.
static latch::status model_erase_if(model &ref, const model_range &r)
{
	auto at = ref.find(r.start);

	if (at == ref.end())
		return latch::status(std::errc::no_such_file_or_directory);
	if (at->second.end != r.end || at->second.value != r.value)
		return latch::status(latch::stale_range);
	ref.erase(at);
	return latch::status();
}

// What store() with room for @room must answer on @ref (updated on success).
static model_map::store_status model_store(model &ref, const model_range &r, std::size_t room)
{
	if (r.start >= r.end)
		return model_map::store_status(latch::status(std::errc::invalid_argument), 0);
	std::vector<model_range> gone = overlapping(ref, r.start, r.end);
	if (gone.size() > room)
		return model_map::store_status(latch::status(std::errc::no_space_on_device),
		                               gone.size());
	for (const model_range &g : gone)
		ref.erase(g.start);
	ref[r.start] = r;
	return model_map::store_status(latch::status(), gone.size());
}

// What commit() must answer for @changes on @ref, which it updates on success.
static latch::commit_status model_commit(model &ref, const std::vector<model_map::change> &changes)
{
	model after = ref;

	for (std::size_t i = 0; i < changes.size(); i++) {
		const model_map::change &c = changes[i];
		latch::status s;

		if (c.op == latch::range_op::insert)
			s = model_insert(after, { c.start, c.end, c.value });
		else if (c.op == latch::range_op::erase_if)
			s = model_erase_if(after, { c.start, c.end, c.value });
		else if (c.op == latch::range_op::store)
			s = model_store(after, { c.start, c.end, c.value }, ~std::size_t{ 0 });
		else if (c.op != latch::range_op::erase)
			s = latch::status(std::errc::invalid_argument);
		else if (!after.erase(c.start))
			s = latch::status(std::errc::no_such_file_or_directory);
		if (!s)
			return latch::commit_status(s, i);
	}
	ref = std::move(after);
	return latch::commit_status(latch::status(), changes.size());
}

// An insert's answer: its status, and the range it collided with.
static void check_insert(model_map &m, model &ref, const model_range &r)
{
	auto hit = overlap_of(ref, r.start, r.end);
	model_range collision = hit != ref.end() ? hit->second : model_range{};
	latch::status want = model_insert(ref, r);
	model_map::insert_status got = m.insert(r.start, r.end, r.value);

	CHECK(got.error() == want.error(), "insert [%#lx, %#lx): error %d, want %d",
	      (unsigned long)r.start, (unsigned long)r.end, (int)got.error(), (int)want.error());
	if (want.error() == std::errc::file_exists)
		CHECK(same_range(got.collision(), collision), "insert: the collision");
	else
		CHECK(!got.collision(), "insert: a collision without an overlap");
}

// A remove's answer: its status, and the range it removed.
static void check_remove(model_map &m, model &ref, uintptr_t start)
{
	auto at = ref.find(start);
	std::optional<model_range> want;

	if (at != ref.end())
		want = at->second, ref.erase(at);
	model_map::remove_status got = m.remove(start);
	CHECK(bool(got) == bool(want) &&
	          (want || got.error() == std::errc::no_such_file_or_directory),
	      "remove(%#lx)", (unsigned long)start);
	CHECK(want ? same_range(got.removed(), *want) : !got.removed(), "remove: the range");
}

// An erase_if of the range at @at (or of one like it with another end or
// value, after @how), or of a start where none is.
static void check_erase_if(model_map &m, model &ref, model_range r, unsigned how)
{
	auto at = ref.find(r.start);

	if (at != ref.end())
		r = at->second;
	if (how == 1)
		r.end++;
	else if (how == 2)
		r.value ^= 1;
	latch::status want = model_erase_if(ref, r);
	latch::status got = m.erase_if(r);
	CHECK(got.error() == want.error(), "erase_if [%#lx, %#lx): error %d, want %d",
	      (unsigned long)r.start, (unsigned long)r.end, (int)got.error(), (int)want.error());
}

// A store's answer with room for @room: its status, and the ranges evicted.
static void check_store(model_map &m, model &ref, const model_range &r, std::size_t room)
{
	std::vector<model_range> gone = overlapping(ref, r.start, r.end);
	model_map::store_status want = model_store(ref, r, room);
	std::vector<model_range> out(room + 1, model_range{ 1, 1, 1 });
	model_map::store_status got =
	    m.store(r.start, r.end, r.value, room ? out.data() : nullptr, room);

	CHECK(got.error() == want.error() && got.evicted() == want.evicted(),
	      "store [%#lx, %#lx) with room for %zu: error %d, %zu evicted; want %d, %zu",
	      (unsigned long)r.start, (unsigned long)r.end, room, (int)got.error(), got.evicted(),
	      (int)want.error(), want.evicted());
	for (std::size_t i = 0; i < out.size(); i++)
		CHECK(want && i < gone.size() ? same_range(out[i], gone[i])
		                              : out[i].start == 1 && out[i].end == 1,
		      "store: evicted[%zu]", i);
}

// The ranges of @ref, with every value changed, and maybe one made bad:
// what load_sorted() then answers, with @ref updated on success.
static latch::commit_status model_reload(model &ref, std::vector<model_range> &load,
                                         struct test_rng *rng)
{
	for (auto &e : ref)
		load.push_back({ e.first, e.second.end, ~e.second.value });
	if (load.size() < 2 || test_rng_below(rng, 3) != 0) {
		ref.clear();
		for (const model_range &r : load)
			ref[r.start] = r;
		return latch::commit_status(latch::status(), load.size());
	}
	std::size_t i = 1 + test_rng_below(rng, load.size() - 1);
	switch (test_rng_below(rng, 3)) {
	case 0: // empty
		load[i].end = load[i].start;
		return latch::commit_status(latch::status(std::errc::invalid_argument), i);
	case 1: // below the one before
		load[i].start = load[i - 1].start - 1;
		load[i].end = load[i - 1].start;
		return latch::commit_status(latch::status(std::errc::invalid_argument), i);
	default: // into the one before
		load[i].start = load[i - 1].end - 1;
		return latch::commit_status(latch::status(std::errc::file_exists), i);
	}
}

// Random single changes, batches and reloads over a small address space,
// so that every kind of error happens often.
static void check_model(long ops)
{
	model_map m = make_empty<model_map>();
	model ref;
	struct test_rng rng = { 12345 };
	const uintptr_t space = 8000;

	for (long op = 0; op < ops; op++) {
		uintptr_t start = 1 + test_rng_below(&rng, space);
		uintptr_t end = start + test_rng_below(&rng, 24); // empty at times
		std::uint32_t value = (std::uint32_t)test_rng_next(&rng);
		unsigned what = (unsigned)test_rng_below(&rng, 1000);

		if (what < 400) {
			check_insert(m, ref, { start, end, value });
		} else if (what < 700 && what % 3) {
			auto at = floor_of(ref, start);

			if (what % 3 == 1)
				check_remove(m, ref,
				             at != ref.end() && what % 4 ? at->first : start);
			else
				check_erase_if(
				    m, ref,
				    { at != ref.end() && what % 4 ? at->first : start, end, value },
				    what % 5);
		} else if (what < 800 && what >= 700) {
			if (what % 5 == 0)
				end = start + test_rng_below(&rng, 300);
			check_store(m, ref, { start, end, value },
			            what % 7 ? test_rng_below(&rng, 5) : 64);
		} else if (what < 700) {
			// Mostly a start that is there.
			auto at = floor_of(ref, start);
			if (at != ref.end() && what % 4)
				start = at->first;
			bool present = ref.erase(start) != 0;
			latch::status s = m.erase(start);

			CHECK(bool(s) == present &&
			          (present || s.error() == std::errc::no_such_file_or_directory),
			      "erase");
		} else if (what < 995) {
			std::vector<model_map::change> batch(test_rng_below(&rng, 6));

			for (model_map::change &c : batch) {
				unsigned kind = (unsigned)test_rng_below(&rng, 41);

				c.op = kind == 40 ? static_cast<latch::range_op>(7)
				                  : static_cast<latch::range_op>(kind % 4);
				c.start = 1 + test_rng_below(&rng, space);
				c.end = c.start + test_rng_below(&rng, 24);
				c.value = (std::uint32_t)test_rng_next(&rng);
				auto at = floor_of(ref, c.start);
				if (c.op != latch::range_op::insert && at != ref.end() && kind % 5)
					c.start = at->first;
				if (c.op == latch::range_op::erase_if && at != ref.end() &&
				    kind % 3 && c.start == at->first)
					c.end = at->second.end, c.value = at->second.value;
			}
			latch::commit_status want = model_commit(ref, batch);
			latch::commit_status got = m.commit(batch);

			CHECK(got.error() == want.error() && got.failed() == want.failed(),
			      "commit: error %d at %zu, want %d at %zu", (int)got.error(),
			      got.failed(), (int)want.error(), want.failed());
		} else {
			std::vector<model_range> load;
			latch::commit_status want = model_reload(ref, load, &rng);
			latch::commit_status got = m.load_sorted(load);

			CHECK(got.error() == want.error() && got.failed() == want.failed(),
			      "load_sorted: error %d at %zu, want %d at %zu", (int)got.error(),
			      got.failed(), (int)want.error(), want.failed());
		}
		check_at(m, ref, start);
		check_at(m, ref, end);
	}
	// A walk by next() from first() sees it all, in order.
	auto it = ref.begin();
	for (auto r = m.first(); r; r = m.next(r->start), ++it)
		CHECK(it != ref.end() && same_range(r, it->second), "walk");
	CHECK(it == ref.end(), "walk: the map ended early");
	// A walk by prev() from last() sees it all, in reverse order.
	auto back = ref.rbegin();
	for (auto r = m.last(); r; r = m.prev(r->start), ++back)
		CHECK(back != ref.rend() && same_range(r, back->second), "walk backwards");
	CHECK(back == ref.rend(), "walk backwards: the map ended early");
	// find_many() answers as find() does, past a group of 64.
	std::vector<uintptr_t> probe(150);
	std::vector<std::optional<model_range>> got(probe.size());
	std::size_t want = 0;

	for (uintptr_t &a : probe)
		a = test_rng_below(&rng, space + 30);
	std::size_t hits = m.find_many(probe, got.data());
	for (std::size_t i = 0; i < probe.size(); i++) {
		auto one = m.find(probe[i]);

		CHECK(bool(one) == bool(got[i]) && (!one || same_range(got[i], *one)),
		      "find_many(%#lx)", (unsigned long)probe[i]);
		want += bool(one);
	}
	CHECK(hits == want, "find_many: %zu hits, find() has %zu", hits, want);
}

// Errors leave the map as it was; a batch or a load names its first bad
// range; an insert names the range it collided with.
static void check_errors()
{
	model_map m = make_empty<model_map>();
	model ref;

	CHECK(m.reserve(100), "reserve");
	CHECK(m.insert(0x1000, 0x2000, 1) && m.insert(0x3000, 0x4000, 2), "insert");
	ref[0x1000] = { 0x1000, 0x2000, 1 };
	ref[0x3000] = { 0x3000, 0x4000, 2 };
	CHECK(m.insert(0x2000, 0x3000, 3), "insert between, adjacent on both sides");
	CHECK(m.erase(0x2000), "erase it");

	model_map::insert_status s = m.insert(0x1800, 0x3800, 9);
	CHECK(!s && s.error() == std::errc::file_exists && s.collision() &&
	          s.collision()->start == 0x1000 && s.collision()->end == 0x2000 &&
	          s.collision()->value == 1,
	      "insert over two ranges: the lower one");
	s = m.insert(0x2800, 0x3001, 9);
	CHECK(s.collision() && s.collision()->start == 0x3000, "insert into the next range");
	s = m.insert(0x500, 0x500, 9);
	CHECK(s.error() == std::errc::invalid_argument && !s.collision(), "empty range");
	s = m.insert(0x600, 0x500, 9);
	CHECK(s.error() == std::errc::invalid_argument && !s.collision(), "reversed range");
	CHECK(m.erase(0x1001).error() == std::errc::no_such_file_or_directory,
	      "erase inside a range, not at its start");
	check_at(m, ref, 0x1800);

	// A braced list of changes; the third is bad, so none applies.
	latch::commit_status c = m.commit({ { latch::range_op::erase, 0x1000 },
	                                    { latch::range_op::insert, 0x1800, 0x3000, 4 },
	                                    { latch::range_op::insert, 0x3fff, 0x5000, 5 } });
	CHECK(!c && c.error() == std::errc::file_exists && c.failed() == 2,
	      "commit: an insert overlapping a range");
	model_map::change bad[] = { { latch::range_op::erase, 0x3000 },
		                    { latch::range_op::erase, 0x3000 } };
	c = m.commit(bad);
	CHECK(c.error() == std::errc::no_such_file_or_directory && c.failed() == 1,
	      "commit: an erase of an erased range");
	c = m.commit({ { latch::range_op::insert, 0x5000, 0x6000, 6 },
	               { static_cast<latch::range_op>(-1), 0x5000 } });
	CHECK(c.error() == std::errc::invalid_argument && c.failed() == 1, "commit: unknown op");
	check_at(m, ref, 0x5000);
	check_at(m, ref, 0x3000);

	// A batch may erase a range and insert an overlapping one in its place.
	c = m.commit(
	    { { latch::range_op::erase, 0x1000 }, { latch::range_op::insert, 0x800, 0x2800, 7 } });
	CHECK(c && c.failed() == 2, "commit: a range replaced by a larger one");
	ref.erase(0x1000);
	ref[0x800] = { 0x800, 0x2800, 7 };
	check_at(m, ref, 0x1000);

	// erase_if spares a replaced range; store evicts, or says how many it would.
	CHECK(m.insert(0x9000, 0x9100, 1), "insert");
	CHECK(m.erase_if({ 0x9000, 0x9100, 2 }).error() == latch::stale_range &&
	          m.erase_if({ 0x9000, 0x9200, 1 }).error() == latch::stale_range &&
	          m.erase_if({ 0x9001, 0x9100, 1 }).error() == std::errc::no_such_file_or_directory,
	      "erase_if of a replaced range, or where none starts");
	model_range out[2];
	model_map::store_status st = m.store(0x8f00, 0x9200, 3, nullptr, 0);
	CHECK(st.error() == std::errc::no_space_on_device && st.evicted() == 1,
	      "store without room");
	st = m.store(0x9200, 0x9200, 3, out, 2);
	CHECK(st.error() == std::errc::invalid_argument && st.evicted() == 0, "store of nothing");
	st = m.store(0x8f00, 0x9200, 3, out, 2);
	CHECK(st && st.evicted() == 1 && out[0].start == 0x9000 && out[0].value == 1, "store");
	CHECK(m.erase_if({ 0x8f00, 0x9200, 3 }), "erase_if of the stored range");

	// Loads out of order, overlapping or empty name their bad range.
	c = m.load_sorted({ { 1, 2, 0 }, { 5, 9, 0 }, { 3, 4, 0 } });
	CHECK(c.error() == std::errc::invalid_argument && c.failed() == 2, "unsorted load");
	c = m.load_sorted({ { 1, 6, 0 }, { 5, 9, 0 } });
	CHECK(c.error() == std::errc::file_exists && c.failed() == 1, "overlapping load");
	c = m.load_sorted({ { 1, 6, 0 }, { 6, 6, 0 } });
	CHECK(c.error() == std::errc::invalid_argument && c.failed() == 1, "empty range in a load");
	c = m.load_sorted({ { 1, 6, 0 }, { 1, 9, 0 } });
	CHECK(c.error() == std::errc::file_exists && c.failed() == 1, "equal starts in a load");
	check_at(m, ref, 0x3000);

	// Empty batches and an empty reload are fine.
	c = m.commit(latch::array_view<model_map::change>(nullptr, 0));
	CHECK(c && c.failed() == 0, "empty commit");
	c = m.load_sorted(latch::array_view<model_range>(nullptr, 0));
	CHECK(c && c.failed() == 0, "empty reload");
	CHECK(m.empty() && !m.first() && !m.last() && !m.floor(~uintptr_t{ 0 }) && !m.ceil(0) &&
	          !m.find(0x800) && !m.next(0) && !m.prev(~uintptr_t{ 0 }),
	      "emptied");
}

// Moving a handle moves ownership; the moved-from handle is empty and may
// be destroyed or assigned to.
static void check_moves()
{
	model_map a = make_empty<model_map>();

	CHECK(a.insert(10, 20, 100), "insert");
	model_map b(std::move(a));
	CHECK(!a.valid() && b.valid() && b.find(15)->value == 100u, "move construction");

	model_map c = make_empty<model_map>();
	CHECK(c.insert(30, 40, 200), "insert");
	c = std::move(b); // the map c held is destroyed
	CHECK(!b.valid() && c.valid() && c.find(15)->value == 100u && !c.find(35),
	      "move assignment");
	b = std::move(c); // a moved-from handle takes a map
	CHECK(b.valid() && !c.valid() && b.find(19)->value == 100u,
	      "assignment to a moved-from handle");

	// A vector of maps moves them as it grows; every map is still whole.
	std::vector<model_map> maps;
	for (std::uint32_t i = 0; i < 20; i++) {
		maps.push_back(make_empty<model_map>());
		CHECK(maps.back().insert(i, i + 1, i), "insert");
	}
	for (std::uint32_t i = 0; i < 20; i++)
		CHECK(maps[i].size() == 1 && maps[i].find(i)->value == i, "map %u after the moves",
		      i);
} // a and c, moved from, are destroyed here

// Values that are not 32-bit integers: each kind keeps its bytes.
enum class perm : unsigned char { read = 4, exec = 1 };

static void check_value_types()
{
	auto names = latch::range_map<const char *>::create();
	static const latch::range<const char *> text[] = { { 0, 10, "libc" }, { 10, 20, "libm" } };
	CHECK(names && names->load_sorted(text), "load_sorted of pointers");
	CHECK(names->find(12)->value == text[1].value && names->floor(99)->value == text[1].value,
	      "pointers");

	// void *, the default: the values are handed over as they are.
	auto raw = latch::range_map<>::create();
	int x = 0;
	CHECK(raw && raw->insert(5, 6, &x) && raw->find(5)->value == &x, "void *");
	auto collided = raw->insert(4, 6, nullptr);
	CHECK(collided.collision() && collided.collision()->value == &x, "void * collision");

	auto perms = latch::range_map<perm>::create();
	CHECK(perms && perms->insert(3, 4, perm::exec) && perms->find(3)->value == perm::exec,
	      "enum");
	CHECK(perms->commit({ { latch::range_op::erase, 3 },
	                      { latch::range_op::insert, 3, 5, perm::read } }) &&
	          perms->ceil(1)->value == perm::read && perms->find(4),
	      "enum in a batch");

	auto smalls = latch::range_map<small>::create();
	CHECK(smalls && smalls->insert(9, 10, small{ 0xbeef, 7 }), "insert a struct");
	CHECK(smalls->find(9)->value == (small{ 0xbeef, 7 }) &&
	          smalls->first()->value == (small{ 0xbeef, 7 }),
	      "struct");
	// One range: it is first and last, and nothing is before or after it.
	CHECK(smalls->last()->start == 9 && smalls->prev(10)->start == 9 && !smalls->prev(9) &&
	          !smalls->next(9) && !smalls->prev(0),
	      "a single range");

	// The top of the address space: the last range ends at the greatest address.
	const uintptr_t top = ~uintptr_t{ 0 };
	auto words = latch::range_map<uintptr_t>::create();
	CHECK(words && words->insert(top - 1, top, top) && words->find(top - 1)->value == top &&
	          !words->find(top) && !words->next(top - 1) && words->floor(top)->end == top,
	      "a whole word at the top");
	CHECK(words->last()->start == top - 1 && words->prev(top)->start == top - 1 &&
	          !words->prev(top - 1),
	      "last and prev at the top");
	// The bottom: a range at address 0, with nothing before it.
	CHECK(words->insert(0, 1, 0) && words->first()->start == 0 && words->prev(1)->start == 0 &&
	          !words->prev(0) && words->prev(top - 1)->start == 0 &&
	          words->last()->start == top - 1,
	      "a range at 0");
}

// A timer signal interrupts the writer on its own thread; the handler's
// lookups must be right whatever the writer was doing.  Ranges
// [8i, 8i + 4) are always there, with value 2i or 2i + 1 (a batch erases
// and inserts them again with the other value); [8i + 4, 8i + 6) come and
// go (value 1); [8i + 6, 8i + 8) is never covered.
static constexpr unsigned storm_ranges = 2000;
static std::optional<latch::range_map<uintptr_t>> storm_map;

static void on_tick(int)
{
	static unsigned i;
	uintptr_t base = 8 * (uintptr_t)(i++ % storm_ranges);
	auto r = storm_map->find(base + 3);

	SIG_CHECK(r && r->start == base && r->end == base + 4 && r->value / 2 == base / 8,
	          "find in a stable range");
	SIG_CHECK(!storm_map->find(base + 6), "find in a gap");
	auto low = storm_map->floor(base + 7);
	SIG_CHECK(low && (low->start == base || (low->start == base + 4 && low->value == 1)),
	          "floor");
	auto n = storm_map->next(base);
	SIG_CHECK(!n || n->start == base + 4 || n->start == base + 8, "next");
	auto p = storm_map->prev(base + 8);
	SIG_CHECK(p && (p->start == base || (p->start == base + 4 && p->value == 1)), "prev");
	SIG_CHECK(storm_map->size() >= storm_ranges, "size");
}

static void check_signal(long ms)
{
	struct test_rng rng = { 99 };
	std::vector<latch::range<uintptr_t>> load;
	bool present[storm_ranges] = {};

	storm_map = latch::range_map<uintptr_t>::create();
	CHECK(storm_map, "create");
	for (unsigned i = 0; i < storm_ranges; i++)
		load.push_back({ 8 * (uintptr_t)i, 8 * (uintptr_t)i + 4, 2 * (uintptr_t)i });
	CHECK(storm_map->load_sorted(load), "load_sorted");
	storm_run<on_tick>(ms, [&](unsigned long u) {
		unsigned i = (unsigned)test_rng_below(&rng, storm_ranges - 1);
		uintptr_t k = 8 * (uintptr_t)i;

		if (u % 4 == 3) {
			// Toggle two neighbours' churn ranges and give a stable range
			// the other value, at once.
			latch::range_op toggle[2];
			for (unsigned j = 0; j < 2; j++) {
				toggle[j] = present[i + j] ? latch::range_op::erase
				                           : latch::range_op::insert;
				present[i + j] = !present[i + j];
			}
			CHECK(storm_map->commit({ { toggle[0], k + 4, k + 6, 1 },
			                          { toggle[1], k + 12, k + 14, 1 },
			                          { latch::range_op::erase, k },
			                          { latch::range_op::insert, k, k + 4,
			                            2 * (uintptr_t)i + u / 4 % 2 } }),
			      "commit");
		} else {
			CHECK(present[i] ? storm_map->erase(k + 4)
			                 : storm_map->insert(k + 4, k + 6, 1),
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
	std::puts("test-range-cxx: latch::range_map agrees with std::map, in every context");
	return 0;
}
