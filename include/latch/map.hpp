// SPDX-License-Identifier: MIT
/*
 * latch/map.hpp - latch::map<V>, the C++ face of <latch/map.h>: an ordered
 * map from 64-bit keys to values of type V whose lookups never wait and
 * work in any context, signal handlers that interrupted the writer
 * included.  Header-only, C++17; links with liblatch.
 *
 *	auto m = latch::map<code_blob *>::create();   // std::optional: empty when out of memory
 *	if (!m || !m->insert(blob->start, blob)) ...  // writer: a status, no exceptions
 *	if (auto e = m->floor(pc)) use(e->value);    // any context: std::optional
 *
 * Decisions:
 *  - No exceptions anywhere (it builds with -fno-exceptions): create()
 *    returns std::optional<map>, empty when memory ran out; writers return
 *    latch::status; readers are noexcept and return std::optional.
 *  - A map is a move-only handle that owns the C map on the heap, so moving
 *    the handle never moves the map readers are inside.  A moved-from
 *    handle is empty (valid() is false) and may only be destroyed or
 *    assigned to; the other members require valid().
 *  - V is any trivially copyable type of at most pointer size (pointers,
 *    integers, enums, small structs); the map stores its bytes in the C
 *    map's void * (a pointer as itself) and never looks at them.  Larger
 *    values go behind a pointer.  A static_assert says so otherwise.
 *
 * Contexts, as in <latch/map.h>: readers (find, floor, ceil, first, last,
 * next, prev, size, empty) from any thread and any context, signal
 * handlers included, serialized with nothing; they allocate nothing and
 * take no lock.  Writers (insert, erase, remove, replace, reserve, commit,
 * load_sorted) serialized with each other by the caller, never in a
 * signal handler (they may allocate).  create() and the destructor must
 * not race with any other call on the map.  Every error leaves the map
 * unchanged.
 */
#ifndef LATCH_MAP_HPP
#define LATCH_MAP_HPP

#include <cstdint>
#include <optional>

#include <latch/common.hpp>
#include <latch/map.h>

namespace latch
{

/** An entry of a map: a key and its value. */
template <typename V> struct entry {
	std::uint64_t key;
	V value;
};

/** What a change of a batch does (see map::commit()). */
enum class map_op {
	insert = LATCH_MAP_INSERT,   // add key with value; the key must be absent
	erase = LATCH_MAP_ERASE,     // remove key; the key must be present
	replace = LATCH_MAP_REPLACE, // give key the value; the key must be present
};

/** An ordered latched map from std::uint64_t keys to V (see the top of this file). */
template <typename V = void *> class map
{
	using word = detail::word<V>;
	// Completes word<V>, whose static_asserts check V, with the first mention of map<V>.
	static_assert(sizeof(word) > 0, "");

      public:
	using value_type = V;

	/** One change of a batch; value is ignored by map_op::erase, which may leave it out. */
	struct change {
		map_op op;
		std::uint64_t key;
		V value{};
	};

	/**
	 * create() - a new, empty map.
	 * Returns an empty optional when memory runs out.  Cost O(1); one
	 * small allocation.  Any thread, not in a signal handler.
	 */
	static std::optional<map> create() noexcept
	{
		auto c = detail::make_owned<latch_map, latch_map_destroy>(latch_map_init);

		if (!c)
			return std::nullopt;
		return map(std::move(c));
	}

	/**
	 * Moves the handle; the map stays where it is, so readers inside it
	 * are unaffected.  @other is left empty.  O(1).  Must not race with
	 * a call through either handle.
	 */
	map(map &&other) noexcept = default;
	map &operator=(map &&other) noexcept = default;

	/**
	 * Releases the map's memory (values are not touched).  Call it only
	 * when no reader can be inside the map any more.  O(nodes).
	 */
	~map() = default;

	/** valid() - false for a moved-from handle.  O(1), any context. */
	bool valid() const noexcept
	{
		return c_ != nullptr;
	}

	/**
	 * find() - the value of @key, if present.
	 * O(log n), never waits.  Any context, signal handlers included.
	 */
	std::optional<V> find(std::uint64_t key) const noexcept
	{
		void *w;

		if (!latch_map_find(c_.get(), key, &w))
			return std::nullopt;
		return word::unpack(w);
	}

	/**
	 * find_many() - the values of @keys: out[i] is the value of keys[i],
	 * or empty; returns how many were found.  All answers from one state
	 * of the map for up to 64 keys, then from one state per group of 64
	 * (latch_map_find_many()).  @out must hold keys.size() elements and
	 * not overlap @keys.  O(n log N), never waits, interleaved descents.
	 * Any context, signal handlers included.
	 */
	std::size_t find_many(array_view<std::uint64_t> keys, std::optional<V> *out) const noexcept
	{
		return detail::by_groups(keys.size(), [&](std::size_t at, std::size_t k) noexcept {
			void *w[detail::lookup_group];
			bool found[detail::lookup_group];
			std::size_t hits =
			    latch_map_find_many(c_.get(), keys.data() + at, k, w, found);

			for (std::size_t i = 0; i < k; i++)
				out[at + i] =
				    found[i] ? std::optional<V>(word::unpack(w[i])) : std::nullopt;
			return hits;
		});
	}

	/** floor() - the entry with the greatest key <= @key.  O(log n), any context. */
	std::optional<entry<V>> floor(std::uint64_t key) const noexcept
	{
		return neighbour(latch_map_floor, key);
	}

	/** ceil() - the entry with the least key >= @key.  O(log n), any context. */
	std::optional<entry<V>> ceil(std::uint64_t key) const noexcept
	{
		return neighbour(latch_map_ceil, key);
	}

	/**
	 * next() - the entry with the least key > @key.  O(log n), any context.
	 * A walk by next() is weakly consistent: it sees every key present
	 * throughout the walk, and none twice.
	 */
	std::optional<entry<V>> next(std::uint64_t key) const noexcept
	{
		return neighbour(latch_map_next, key);
	}

	/** prev() - the entry with the greatest key < @key.  As next(), downwards. */
	std::optional<entry<V>> prev(std::uint64_t key) const noexcept
	{
		return neighbour(latch_map_prev, key);
	}

	/** first() - the entry with the least key.  O(log n), any context. */
	std::optional<entry<V>> first() const noexcept
	{
		return edge(latch_map_first);
	}

	/** last() - the entry with the greatest key.  O(log n), any context. */
	std::optional<entry<V>> last() const noexcept
	{
		return edge(latch_map_last);
	}

	/** size() - the number of entries.  O(1), never waits, any context. */
	std::size_t size() const noexcept
	{
		return latch_map_size(c_.get());
	}

	/** empty() - whether the map has no entry.  O(1), any context. */
	bool empty() const noexcept
	{
		return size() == 0;
	}

	/**
	 * insert() - add @key with @value.
	 * Returns ok, std::errc::file_exists (the key is present) or
	 * std::errc::not_enough_memory.  O(log n) per copy.  Writer only,
	 * serialized with other writers.
	 */
	status insert(std::uint64_t key, const V &value) noexcept
	{
		return detail::from_c(latch_map_insert(c_.get(), key, word::pack(value)));
	}

	/**
	 * erase() - remove @key.
	 * Returns ok or std::errc::no_such_file_or_directory (absent).  Never
	 * allocates.  O(log n) per copy.  Writer only, serialized.
	 */
	status erase(std::uint64_t key) noexcept
	{
		return detail::from_c(latch_map_erase(c_.get(), key));
	}

	/**
	 * remove() - remove @key; returns the value it had, or an empty
	 * optional when it was absent (the map is then unchanged).  Never
	 * allocates (latch_map_remove()).  O(log n) per copy.  Writer only,
	 * serialized.
	 */
	std::optional<V> remove(std::uint64_t key) noexcept
	{
		void *w;

		if (latch_map_remove(c_.get(), key, &w) != 0)
			return std::nullopt;
		return word::unpack(w);
	}

	/**
	 * replace() - give present @key the value @value; readers see the old
	 * value or the new one.  Returns ok or
	 * std::errc::no_such_file_or_directory.  Never allocates.  O(log n)
	 * per copy.  Writer only, serialized.
	 */
	status replace(std::uint64_t key, const V &value) noexcept
	{
		return detail::from_c(latch_map_replace(c_.get(), key, word::pack(value)));
	}

	/**
	 * reserve() - allocate now what @n entries need, so that while the map
	 * holds at most @n entries, no insert, erase, replace or commit of up
	 * to 16 changes allocates.  Returns ok or std::errc::not_enough_memory.  O(n).
	 * Writer only, serialized.
	 */
	status reserve(std::size_t n) noexcept
	{
		return detail::from_c(latch_map_reserve(c_.get(), n));
	}

	/**
	 * commit() - apply @changes in order so that readers see all or none.
	 * Each change applies to the map as the ones before it left it, checked
	 * before it is made; a bad one undoes the others.  Returns ok; or
	 * std::errc::invalid_argument (an op that is not a map_op),
	 * file_exists (insert of a present key) or no_such_file_or_directory
	 * (erase or replace of an absent key), with failed() the index of the
	 * first bad change; or not_enough_memory.  O(n log N) per copy for N
	 * entries; a batch of more than 16 changes allocates its O(n) undo
	 * log.  Writer only, serialized.
	 */
	commit_status commit(array_view<change> changes) noexcept
	{
		return detail::batch(
		    latch_map_commit, c_.get(), changes, [](const change &x) noexcept {
			    return latch_map_change{ static_cast<latch_map_op>(x.op), x.key,
				                     word::pack(x.value) };
		    });
	}

	/**
	 * load_sorted() - replace the whole contents by @keys[i] -> @values[i].
	 * @keys must be strictly increasing.  Readers see the old contents or
	 * the new ones.  Returns ok; std::errc::invalid_argument (keys not
	 * strictly increasing, or sizes that differ); or not_enough_memory.
	 * O(n + N) for N old entries; allocates O(n) scratch memory unless V
	 * is void *.  Writer only, serialized.
	 */
	status load_sorted(array_view<std::uint64_t> keys, array_view<V> values) noexcept
	{
		std::size_t n = keys.size();

		if (values.size() != n)
			return status(std::errc::invalid_argument);
		if constexpr (std::is_same<V, void *>::value) {
			return detail::from_c(
			    latch_map_load_sorted(c_.get(), keys.data(), values.data(), n));
		} else {
			detail::scratch<void *> w(n);

			if (!w.ok())
				return status(std::errc::not_enough_memory);
			for (std::size_t i = 0; i < n; i++)
				w[i] = word::pack(values.data()[i]);
			return detail::from_c(
			    latch_map_load_sorted(c_.get(), keys.data(), w.data(), n));
		}
	}

      private:
	using owned = detail::owned<latch_map, latch_map_destroy>;

	explicit map(owned c) noexcept : c_(std::move(c))
	{
	}

	/* floor, ceil, next or prev: @lookup's answer for @key. */
	std::optional<entry<V>> neighbour(bool (*lookup)(const latch_map *, std::uint64_t,
	                                                 std::uint64_t *, void **),
	                                  std::uint64_t key) const noexcept
	{
		std::uint64_t found;
		void *w;

		if (!lookup(c_.get(), key, &found, &w))
			return std::nullopt;
		return entry<V>{ found, word::unpack(w) };
	}

	/* first or last: @lookup's answer. */
	std::optional<entry<V>> edge(bool (*lookup)(const latch_map *, std::uint64_t *,
	                                            void **)) const noexcept
	{
		std::uint64_t found;
		void *w;

		if (!lookup(c_.get(), &found, &w))
			return std::nullopt;
		return entry<V>{ found, word::unpack(w) };
	}

	owned c_;
};

} // namespace latch

#endif /* LATCH_MAP_HPP */
