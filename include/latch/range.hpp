// SPDX-License-Identifier: MIT
/*
 * latch/range.hpp - latch::range_map<V>, the C++ face of <latch/range.h>:
 * a map of non-overlapping address ranges [start, end) to values of type
 * V whose lookups never wait and work in any context, signal handlers
 * that interrupted the writer included.  Header-only, C++17; links with
 * liblatch.
 *
 *	auto m = latch::range_map<code_blob *>::create();    // std::optional: empty when out of memory
 *	auto s = m->insert(blob->start, blob->end, blob);    // writer: a status, no exceptions
 *	if (!s && s.collision()) ... s.collision()->value    // the range it overlapped
 *	if (auto r = m->find(pc)) use(r->value);             // any context: std::optional
 *
 * Decisions, as in <latch/map.hpp>:
 *  - No exceptions anywhere (it builds with -fno-exceptions): create()
 *    returns std::optional<range_map>, empty when memory ran out; writers
 *    return latch::status (insert's also carries the range it collided
 *    with); readers are noexcept and return std::optional.
 *  - A range_map is a move-only handle that owns the C map on the heap, so
 *    moving the handle never moves the map readers are inside.  A
 *    moved-from handle is empty (valid() is false) and may only be
 *    destroyed or assigned to; the other members require valid().
 *  - V is any trivially copyable type of at most pointer size (pointers,
 *    integers, enums, small structs), kept as its bytes in the C map's
 *    void *; larger values go behind a pointer.  A static_assert says so
 *    otherwise.
 *
 * latch::payload_range_map<T> (at the end of this file) is the face of a
 * map with payloads (latch_range_map_init_payload()): each range holds a
 * T by value, and find() copies it out inside the lookup.
 *
 * Contexts, as in <latch/range.h>: readers (find, floor, ceil, first,
 * last, next, prev, size, empty) from any thread and any context, signal handlers
 * included, serialized with nothing; they allocate nothing and take no
 * lock.  Writers (insert, erase, remove, erase_if, store, reserve,
 * commit, load_sorted) from
 * threads, never in a signal handler (they allocate and lock); unlike
 * latch::map's, they need no serialization by the caller: the map locks.
 * create() and the destructor must not race with any other call on the
 * map.  Every error leaves the map unchanged.
 */
#ifndef LATCH_RANGE_HPP
#define LATCH_RANGE_HPP

#include <cerrno>
#include <cstdint>
#include <optional>
#include <type_traits>

#include <latch/common.hpp>
#include <latch/range.h>

namespace latch
{

/** A range [start, end) and its value. */
template <typename V> struct range {
	std::uintptr_t start, end;
	V value;
};

/** What a change of a batch does (see range_map::commit()). */
enum class range_op {
	insert = LATCH_RANGE_INSERT, // add [start, end) with value; it must overlap no range
	erase = LATCH_RANGE_ERASE,   // remove the range that starts at start
	erase_if =
	    LATCH_RANGE_ERASE_IF,  // remove the range at start if it is still [start, end), value
	store = LATCH_RANGE_STORE, // add [start, end) with value, evicting what it overlaps
};

/**
 * The error of range_map::erase_if() when the range was replaced: ESTALE,
 * which std::errc does not name.
 */
inline constexpr std::errc stale_range = static_cast<std::errc>(ESTALE);

/** A latched map of address ranges to V (see the top of this file). */
template <typename V = void *> class range_map
{
	using word = detail::word<V>;
	// Completes word<V>, whose static_asserts check V, with the first mention of range_map<V>.
	static_assert(sizeof(word) > 0, "");

      public:
	using value_type = V;

	/**
	 * One change of a batch; erase uses start only, and may leave end
	 * and value out; erase_if's start, end and value are the expected
	 * range.
	 */
	struct change {
		range_op op;
		std::uintptr_t start;
		std::uintptr_t end = 0;
		V value{};
	};

	/** A status and the one range it names: what insert_status and remove_status share. */
	class [[nodiscard]] ranged_status : public status
	{
	      public:
		/** Status @s, range @r. */
		constexpr ranged_status(status s, std::optional<range<V>> r) noexcept
		    : status(s), range_(r)
		{
		}

	      protected:
		std::optional<range<V>> range_;
	};

	/**
	 * insert_status - the status of an insert, and collision(): when the
	 * error is std::errc::file_exists, the range of the map the new one
	 * overlapped (the one with the lowest start when several did); else
	 * empty.  O(1), any context.
	 */
	class [[nodiscard]] insert_status : public ranged_status
	{
	      public:
		/** Status @s, overlapped range @collision. */
		using ranged_status::ranged_status;

		/** The range the insert overlapped, if that was the error. */
		constexpr const std::optional<range<V>> &collision() const noexcept
		{
			return this->range_;
		}
	};

	/**
	 * remove_status - the status of a remove, and removed(): the range it
	 * removed when it succeeded; else empty.  O(1), any context.
	 */
	class [[nodiscard]] remove_status : public ranged_status
	{
	      public:
		/** Status @s, removed range @removed. */
		using ranged_status::ranged_status;

		/** The range the remove removed, if it succeeded. */
		constexpr const std::optional<range<V>> &removed() const noexcept
		{
			return this->range_;
		}
	};

	/**
	 * store_status - the status of a store, and evicted(): how many ranges
	 * it evicted, or, when the error is std::errc::no_space_on_device,
	 * how many overlap; 0 on other errors.  O(1), any context.
	 */
	class [[nodiscard]] store_status : public status
	{
	      public:
		/** Status @s, @evicted ranges evicted or overlapping. */
		constexpr store_status(status s, std::size_t evicted) noexcept
		    : status(s), evicted_(evicted)
		{
		}

		/** How many ranges the store evicted (or would have to evict). */
		constexpr std::size_t evicted() const noexcept
		{
			return evicted_;
		}

	      private:
		std::size_t evicted_;
	};

	/**
	 * create() - a new, empty map.
	 * Returns an empty optional when memory runs out (or the writers'
	 * mutex cannot be made).  Cost O(1); one small allocation.  Any
	 * thread, not in a signal handler.
	 */
	static std::optional<range_map> create() noexcept
	{
		auto c = detail::make_owned<latch_range_map, latch_range_map_destroy>(
		    latch_range_map_init);

		if (!c)
			return std::nullopt;
		return range_map(std::move(c));
	}

	/**
	 * Moves the handle; the map stays where it is, so readers inside it
	 * are unaffected.  @other is left empty.  O(1).  Must not race with
	 * a call through either handle.
	 */
	range_map(range_map &&other) noexcept = default;
	range_map &operator=(range_map &&other) noexcept = default;

	/**
	 * Releases the map's memory (values are not touched).  Call it only
	 * when no reader can be inside the map any more.  O(nodes).
	 */
	~range_map() = default;

	/** valid() - false for a moved-from handle.  O(1), any context. */
	bool valid() const noexcept
	{
		return c_ != nullptr;
	}

	/**
	 * find() - the range that holds @addr, if any.
	 * O(log n), never waits; right on its first attempt when it
	 * interrupted a writer.  Any context, signal handlers included.
	 */
	std::optional<range<V>> find(std::uintptr_t addr) const noexcept
	{
		return lookup(latch_range_find, addr);
	}

	/**
	 * find_many() - the ranges that hold @addrs: out[i] is the range that
	 * holds addrs[i], or empty; returns how many were found.  All answers
	 * from one state of the map for up to 64 addresses, then from one
	 * state per group of 64 (latch_range_find_many()).  @out must hold
	 * addrs.size() elements and not overlap @addrs.  O(n log N), never
	 * waits, interleaved descents.  Any context, signal handlers included.
	 */
	std::size_t find_many(array_view<std::uintptr_t> addrs,
	                      std::optional<range<V>> *out) const noexcept
	{
		return detail::by_groups(addrs.size(), [&](std::size_t at, std::size_t k) noexcept {
			latch_range r[detail::lookup_group];
			bool found[detail::lookup_group];
			std::size_t hits =
			    latch_range_find_many(c_.get(), addrs.data() + at, k, r, found);

			for (std::size_t i = 0; i < k; i++)
				out[at + i] =
				    found[i] ? std::optional<range<V>>(typed(r[i])) : std::nullopt;
			return hits;
		});
	}

	/**
	 * floor() - the range with the greatest start <= @addr, whether or
	 * not it holds @addr (an address in a gap gets the range before the
	 * gap).  O(log n), never waits.  Any context.
	 */
	std::optional<range<V>> floor(std::uintptr_t addr) const noexcept
	{
		return lookup(latch_range_floor, addr);
	}

	/** ceil() - the range with the least start >= @addr.  O(log n), any context. */
	std::optional<range<V>> ceil(std::uintptr_t addr) const noexcept
	{
		return lookup(latch_range_ceil, addr);
	}

	/**
	 * next() - the range with the least start > @start.  O(log n), any
	 * context.  A walk by first() and next() is weakly consistent: it sees
	 * every range present throughout the walk, in order, none twice.
	 */
	std::optional<range<V>> next(std::uintptr_t start) const noexcept
	{
		return lookup(latch_range_next, start);
	}

	/** prev() - the range with the greatest start < @start.  As next(), downwards. */
	std::optional<range<V>> prev(std::uintptr_t start) const noexcept
	{
		return lookup(latch_range_prev, start);
	}

	/** first() - the range with the least start.  O(log n), any context. */
	std::optional<range<V>> first() const noexcept
	{
		return edge(latch_range_first);
	}

	/** last() - the range with the greatest start.  O(log n), any context. */
	std::optional<range<V>> last() const noexcept
	{
		return edge(latch_range_last);
	}

	/** size() - the number of ranges.  O(1), never waits, any context. */
	std::size_t size() const noexcept
	{
		return latch_range_size(c_.get());
	}

	/** empty() - whether the map has no range.  O(1), any context. */
	bool empty() const noexcept
	{
		return size() == 0;
	}

	/**
	 * insert() - add the range [@start, @end) with @value.
	 * Returns ok; std::errc::invalid_argument (@start >= @end);
	 * std::errc::file_exists, with collision() the range it overlaps; or
	 * std::errc::not_enough_memory.  Readers see the range from the
	 * return at the latest.  O(log n) per copy.  Writer threads, not
	 * signal handlers; the map serializes writers itself.
	 */
	insert_status insert(std::uintptr_t start, std::uintptr_t end, const V &value) noexcept
	{
		latch_range hit;
		status s = detail::from_c(
		    latch_range_insert(c_.get(), start, end, word::pack(value), &hit));

		if (s.error() == std::errc::file_exists)
			return insert_status(s, typed(hit));
		return insert_status(s, std::nullopt);
	}

	/**
	 * erase() - remove the range that starts at @start.
	 * Returns ok or std::errc::no_such_file_or_directory (no range starts
	 * there).  Never allocates; a reader may still hold the range's value
	 * afterwards.  O(log n) per copy.  Writer threads, not signal
	 * handlers; the map serializes writers itself.
	 */
	status erase(std::uintptr_t start) noexcept
	{
		return detail::from_c(latch_range_erase(c_.get(), start));
	}

	/**
	 * remove() - remove the range that starts at @start; removed() is
	 * that range.  Returns ok or std::errc::no_such_file_or_directory (no
	 * range starts there).  Never allocates (latch_range_remove()).
	 * O(log n) per copy.  Writer threads, not signal handlers; the map
	 * serializes writers itself.
	 */
	remove_status remove(std::uintptr_t start) noexcept
	{
		latch_range r;
		status s = detail::from_c(latch_range_remove(c_.get(), start, &r));

		return remove_status(s, s ? std::optional<range<V>>(typed(r)) : std::nullopt);
	}

	/**
	 * erase_if() - remove the range that starts at @expected.start only if
	 * it is still exactly @expected (same end and value).  Returns ok;
	 * std::errc::no_such_file_or_directory (no range starts there); or
	 * latch::stale_range (one does, but its end or value differs: it was
	 * replaced).  Never allocates.  O(log n) per copy.  Writer threads,
	 * not signal handlers; the map serializes writers itself.
	 */
	status erase_if(const range<V> &expected) noexcept
	{
		const latch_range r{ expected.start, expected.end, word::pack(expected.value) };

		return detail::from_c(latch_range_erase_if(c_.get(), &r));
	}

	/**
	 * store() - add [@start, @end) with @value after evicting every range
	 * it overlaps, in one step: readers see the old ranges or the new
	 * one, never a gap.  The evicted ranges go, in start order, to
	 * @evicted[0..] (room for @max_evicted; @evicted may be null when
	 * @max_evicted is 0), and evicted() says how many.  Returns ok;
	 * std::errc::no_space_on_device when more than @max_evicted ranges
	 * overlap (nothing changes; evicted() is how many overlap, so a second
	 * call with that much room does it); std::errc::invalid_argument
	 * (@start >= @end); std::errc::not_enough_memory.  O((k + 1) log n)
	 * per copy for k evictions (latch_range_store()); beyond one evicted
	 * range it allocates a scratch array of @max_evicted C ranges.
	 * Writer threads, not signal handlers; the map serializes writers
	 * itself.
	 */
	store_status store(std::uintptr_t start, std::uintptr_t end, const V &value,
	                   range<V> *evicted, std::size_t max_evicted) noexcept
	{
		std::size_t room = evicted ? max_evicted : 0, n = 0;
		detail::scratch<latch_range> out(room);

		if (!out.ok())
			return store_status(status(std::errc::not_enough_memory), 0);
		status s = detail::from_c(
		    latch_range_store(c_.get(), start, end, word::pack(value), &out[0], room, &n));

		for (std::size_t i = 0; s && i < n; i++)
			evicted[i] = typed(out[i]);
		return store_status(s, n);
	}

	/**
	 * reserve() - allocate now what @n ranges need, so that while the map
	 * holds at most @n ranges, no insert, erase or one-change commit
	 * allocates.  Returns ok or std::errc::not_enough_memory.  O(n).
	 * Writer threads; the map serializes writers itself.
	 */
	status reserve(std::size_t n) noexcept
	{
		return detail::from_c(latch_range_reserve(c_.get(), n));
	}

	/**
	 * commit() - apply @changes in order so that readers see all or none.
	 * Each change applies to the map as the ones before it left it, so a
	 * batch may erase a range and insert an overlapping one in its place,
	 * or store one over ranges (its evictions are not reported).
	 * Returns ok; or std::errc::invalid_argument (an op that is not a
	 * range_op, or an insert or store with start >= end), file_exists (an
	 * insert that overlaps a range), no_such_file_or_directory (an erase
	 * or erase_if where no range starts) or latch::stale_range (an
	 * erase_if of a range that was replaced), with failed() the index of
	 * the first bad change; or not_enough_memory.  O((n + e) log N) per
	 * copy for N ranges and e evictions; a batch of more than 16 changes
	 * allocates its O(n) undo log, one whose stores evict more than it
	 * holds a larger one.  Writer threads, not signal handlers; the map
	 * serializes writers itself.
	 */
	commit_status commit(array_view<change> changes) noexcept
	{
		return detail::batch(
		    latch_range_commit, c_.get(), changes, [](const change &x) noexcept {
			    return latch_range_change{ static_cast<latch_range_op>(x.op),
				                       { x.start, x.end, word::pack(x.value) } };
		    });
	}

	/**
	 * load_sorted() - replace the whole contents by @ranges, which must be
	 * sorted by start and must not overlap; readers see the old contents
	 * or the new ones.  Returns ok; or std::errc::invalid_argument (a
	 * range with start >= end, or a start below the one before it) or
	 * file_exists (a range that overlaps the one before it), with failed()
	 * its index; or not_enough_memory.  O(n + N) for N old ranges;
	 * allocates O(n) scratch memory.  Writer threads, not signal handlers;
	 * the map serializes writers itself.
	 */
	commit_status load_sorted(array_view<range<V>> ranges) noexcept
	{
		return detail::batch(
		    latch_range_load_sorted, c_.get(), ranges, [](const range<V> &x) noexcept {
			    return latch_range{ x.start, x.end, word::pack(x.value) };
		    });
	}

      private:
	using owned = detail::owned<latch_range_map, latch_range_map_destroy>;

	explicit range_map(owned c) noexcept : c_(std::move(c))
	{
	}

	/* A range of the C map as a range<V>. */
	static range<V> typed(const latch_range &r) noexcept
	{
		return range<V>{ r.start, r.end, word::unpack(r.value) };
	}

	/* find, floor, ceil, next or prev: @how's answer for @addr. */
	std::optional<range<V>> lookup(bool (*how)(const latch_range_map *, std::uintptr_t,
	                                           latch_range *),
	                               std::uintptr_t addr) const noexcept
	{
		latch_range r;

		if (!how(c_.get(), addr, &r))
			return std::nullopt;
		return typed(r);
	}

	/* first or last: @how's answer. */
	std::optional<range<V>> edge(bool (*how)(const latch_range_map *,
	                                         latch_range *)) const noexcept
	{
		latch_range r;

		if (!how(c_.get(), &r))
			return std::nullopt;
		return typed(r);
	}

	owned c_;
};

/** A range [start, end) and its payload, copied out of a payload_range_map. */
template <typename T> struct payload_range {
	std::uintptr_t start, end;
	T payload;
};

/** The bounds of a range, without its payload. */
struct range_bounds {
	std::uintptr_t start, end;
};

/**
 * A latched map of address ranges each holding a payload of type T by
 * value (latch_range_map_init_payload(), latch_range_payload(3)): find()
 * copies the payload out inside the lookup, so what a reader gets is its
 * own and nothing needs a grace period; the slot of an erased range is
 * reused at once.  T is trivially copyable, of a size that is a multiple
 * of 8 from 8 to LATCH_RANGE_PAYLOAD_MAX (256) bytes; a static_assert says
 * so otherwise.  Decisions and contexts as range_map's (the top of this
 * file): readers (find, size, empty) from any context, signal handlers
 * included; writers (insert, erase, erase_if, store) from threads, the
 * map locks; no exceptions.
 */
template <typename T> class payload_range_map
{
	static_assert(
	    std::is_trivially_copyable<T>::value,
	    "latch: the payload type must be trivially copyable: the map stores its bytes "
	    "and readers copy them out, in any context");
	static_assert(sizeof(T) % 8 == 0 && sizeof(T) <= LATCH_RANGE_PAYLOAD_MAX,
	              "latch: the payload type's size must be a multiple of 8 bytes, at most "
	              "LATCH_RANGE_PAYLOAD_MAX (256); pad it, or store a pointer to larger values "
	              "in a range_map");
	static_assert(std::is_nothrow_default_constructible<T>::value,
	              "latch: the payload type must be default constructible without throwing: "
	              "readers make a T to copy the stored bytes into");

      public:
	using payload_type = T;

	/**
	 * insert_status - the status of an insert, and collision(): when the
	 * error is std::errc::file_exists, the bounds of the range the new one
	 * overlapped (the lowest start when several did); else empty.  O(1),
	 * any context.
	 */
	class [[nodiscard]] insert_status : public status
	{
	      public:
		/** Status @s, overlapped range @collision. */
		constexpr insert_status(status s, std::optional<range_bounds> collision) noexcept
		    : status(s), collision_(collision)
		{
		}

		/** The bounds of the range the insert overlapped, if that was the error. */
		constexpr const std::optional<range_bounds> &collision() const noexcept
		{
			return collision_;
		}

	      private:
		std::optional<range_bounds> collision_;
	};

	/** As range_map's: how many ranges a store evicted (or overlap). */
	using store_status = typename range_map<>::store_status;

	/**
	 * create() - a new, empty map of payloads of type T.
	 * Returns an empty optional when memory runs out (or the writers'
	 * mutex cannot be made).  Cost O(1); one small allocation.  Any
	 * thread, not in a signal handler.
	 */
	static std::optional<payload_range_map> create() noexcept
	{
		auto c = detail::make_owned<latch_range_map, latch_range_map_destroy>(init);

		if (!c)
			return std::nullopt;
		return payload_range_map(std::move(c));
	}

	/** Moves the handle, as range_map's; @other is left empty.  O(1). */
	payload_range_map(payload_range_map &&other) noexcept = default;
	payload_range_map &operator=(payload_range_map &&other) noexcept = default;

	/** Releases the map and its payloads; when no reader can be inside it any more. */
	~payload_range_map() = default;

	/** valid() - false for a moved-from handle.  O(1), any context. */
	bool valid() const noexcept
	{
		return c_ != nullptr;
	}

	/**
	 * find() - the range that holds @addr, if any, with a copy of its
	 * payload taken in the same attempt: one whole payload the range held.
	 * O(log n) plus the copy, never waits.  Any context, signal handlers
	 * included.
	 */
	std::optional<payload_range<T>> find(std::uintptr_t addr) const noexcept
	{
		latch_range r;
		T p{};

		if (!latch_range_find_payload(c_.get(), addr, &r, &p))
			return std::nullopt;
		return payload_range<T>{ r.start, r.end, p };
	}

	/** size() - the number of ranges.  O(1), never waits, any context. */
	std::size_t size() const noexcept
	{
		return latch_range_size(c_.get());
	}

	/** empty() - whether the map has no range.  O(1), any context. */
	bool empty() const noexcept
	{
		return size() == 0;
	}

	/**
	 * insert() - add [@start, @end) holding a copy of @payload, copied in
	 * before readers can see the range.  Returns ok;
	 * std::errc::invalid_argument (@start >= @end); std::errc::file_exists,
	 * with collision() the bounds it overlaps; or
	 * std::errc::not_enough_memory.  O(log n) per copy plus the copy.
	 * Writer threads, not signal handlers; the map serializes writers.
	 */
	insert_status insert(std::uintptr_t start, std::uintptr_t end, const T &payload) noexcept
	{
		latch_range hit;
		status s = detail::from_c(
		    latch_range_insert_payload(c_.get(), start, end, &payload, &hit));

		if (s.error() == std::errc::file_exists)
			return insert_status(s, range_bounds{ hit.start, hit.end });
		return insert_status(s, std::nullopt);
	}

	/**
	 * erase() - remove the range that starts at @start; its payload slot is
	 * reused at once.  Returns ok or std::errc::no_such_file_or_directory.
	 * Never allocates.  O(log n) per copy.  Writer threads; the map
	 * serializes writers.
	 */
	status erase(std::uintptr_t start) noexcept
	{
		return detail::from_c(latch_range_erase(c_.get(), start));
	}

	/**
	 * erase_if() - remove the range at @expected.start only if it is still
	 * [@expected.start, @expected.end) with the same payload bytes.
	 * Returns ok; std::errc::no_such_file_or_directory; or
	 * latch::stale_range (its end or payload differs).  Never allocates.
	 * O(log n) per copy plus a compare of the payload.  Writer threads;
	 * the map serializes writers.
	 */
	status erase_if(const payload_range<T> &expected) noexcept
	{
		return detail::from_c(latch_range_erase_if_payload(
		    c_.get(), expected.start, expected.end, &expected.payload));
	}

	/**
	 * store() - add [@start, @end) holding a copy of @payload after
	 * evicting every range it overlaps, in one step.  The evicted ranges'
	 * bounds go, in start order, to @evicted[0..] (room for @max_evicted;
	 * null when it is 0).  Returns and costs as range_map::store().
	 * Writer threads; the map serializes writers.
	 */
	store_status store(std::uintptr_t start, std::uintptr_t end, const T &payload,
	                   range_bounds *evicted, std::size_t max_evicted) noexcept
	{
		std::size_t room = evicted ? max_evicted : 0, n = 0;
		detail::scratch<latch_range> out(room);

		if (!out.ok())
			return store_status(status(std::errc::not_enough_memory), 0);
		status s = detail::from_c(
		    latch_range_store_payload(c_.get(), start, end, &payload, &out[0], room, &n));

		for (std::size_t i = 0; s && i < n; i++)
			evicted[i] = range_bounds{ out[i].start, out[i].end };
		return store_status(s, n);
	}

      private:
	using owned = detail::owned<latch_range_map, latch_range_map_destroy>;

	explicit payload_range_map(owned c) noexcept : c_(std::move(c))
	{
	}

	static int init(latch_range_map *m) noexcept
	{
		return latch_range_map_init_payload(m, sizeof(T));
	}

	owned c_;
};

} // namespace latch

#endif /* LATCH_RANGE_HPP */
