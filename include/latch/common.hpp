// SPDX-License-Identifier: MIT
/*
 * latch/common.hpp - what the C++ wrappers of liblatch share: the result
 * of a writer call (latch::status, latch::commit_status), a read-only view
 * of an array (latch::array_view), and, in latch::detail, the ownership of
 * a C structure at a fixed address, the packing of typed values into the
 * void * the C maps store, and the arrays the C batch calls take.
 * Included by <latch/map.hpp> and <latch/range.hpp>; C++17.
 *
 * The wrappers throw no exceptions and work with -fno-exceptions: writers
 * return a status, readers return std::optional, construction that can run
 * out of memory is a static create() returning std::optional.
 */
#ifndef LATCH_COMMON_HPP
#define LATCH_COMMON_HPP

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>

namespace latch
{

/**
 * status - what a writer call did: ok, or the error it returned (the map
 * is then unchanged).  Converts to true on success.  A value type; every
 * member is O(1) and callable from any context.
 */
class [[nodiscard]] status
{
      public:
	/** Success. */
	constexpr status() noexcept = default;

	/** The error @e (std::errc{} is success). */
	constexpr explicit status(std::errc e) noexcept : error_(e)
	{
	}

	/** True when the call succeeded. */
	constexpr bool ok() const noexcept
	{
		return error_ == std::errc{};
	}

	/** As ok(). */
	constexpr explicit operator bool() const noexcept
	{
		return ok();
	}

	/** The error: std::errc{} on success, else e.g. std::errc::file_exists. */
	constexpr std::errc error() const noexcept
	{
		return error_;
	}

      private:
	std::errc error_{};
};

/**
 * commit_status - the status of a batch, and failed(): the index of the
 * first bad change, or the number of changes when none was bad (success,
 * or std::errc::not_enough_memory).  O(1), any context.
 */
class [[nodiscard]] commit_status : public status
{
      public:
	/** Status @s, first bad change @failed. */
	constexpr commit_status(status s, std::size_t failed) noexcept : status(s), failed_(failed)
	{
	}

	/** The index of the first bad change, or the batch's size. */
	constexpr std::size_t failed() const noexcept
	{
		return failed_;
	}

      private:
	std::size_t failed_;
};

/**
 * array_view - a read-only view of @size() contiguous T: what batch calls
 * take.  Made from a pointer and a size, from any contiguous container
 * (std::vector, std::array, a C array, std::span, ...) or from a braced
 * list, which lives until the end of the call it is written in.  It does
 * not own the elements.  Every member is O(1), noexcept, any context.
 */
template <typename T> class array_view
{
      public:
	/** The @size elements at @data (which may be null when @size is 0). */
	constexpr array_view(const T *data, std::size_t size) noexcept : data_(data), size_(size)
	{
	}

	/**
	 * The elements of @list, for a braced list written as the argument of
	 * a call: it lives until the call returns (as std::span's constructor
	 * from an initializer_list in C++26).
	 */
	constexpr array_view(std::initializer_list<T> list) noexcept
	    : data_(std::data(list)), size_(list.size())
	{
	}

	/** The elements of contiguous container @c. */
	template <typename C,
	          typename = std::enable_if_t<std::is_convertible<
	              decltype(std::data(std::declval<const C &>())), const T *>::value>>
	constexpr array_view(const C &c) noexcept : data_(std::data(c)), size_(std::size(c))
	{
	}

	/** The first element. */
	constexpr const T *data() const noexcept
	{
		return data_;
	}

	/** The number of elements. */
	constexpr std::size_t size() const noexcept
	{
		return size_;
	}

      private:
	const T *data_;
	std::size_t size_;
};

namespace detail
{

/* A C call's result (0 or a negative errno) as a status. */
constexpr status from_c(int rc) noexcept
{
	return status(static_cast<std::errc>(-rc));
}

/* Destroys a C object with its destroy function, then frees it. */
template <typename C, void (*Destroy)(C *)> struct destroyer {
	void operator()(C *c) const noexcept
	{
		Destroy(c);
		delete c;
	}
};

/*
 * A C object owned through a pointer: moving the owner does not move the
 * object, whose address readers may hold (signal handlers included).
 */
template <typename C, void (*Destroy)(C *)> using owned = std::unique_ptr<C, destroyer<C, Destroy>>;

/* A new C object made by @init (0 or a negative errno); null when out of memory or @init fails. */
template <typename C, void (*Destroy)(C *)> owned<C, Destroy> make_owned(int (*init)(C *)) noexcept
{
	C *c = new (std::nothrow) C();

	if (c && init(c) != 0) {
		delete c;
		c = nullptr;
	}
	return owned<C, Destroy>(c);
}

/*
 * Typed values in the void * of a C map: a V is kept as its bytes at the
 * start of the pointer, the rest zero, so a pointer V is kept as itself.
 * The map copies these words; readers turn them back into V.
 */
template <typename V> struct word {
	static_assert(std::is_trivially_copyable<V>::value,
	              "latch: the value type must be trivially copyable: the map stores its bytes "
	              "and readers copy them out, in any context");
	static_assert(
	    sizeof(V) <= sizeof(void *),
	    "latch: the value type must fit in a void * (a pointer, an integer of at most "
	    "pointer size, a small struct); store a pointer to larger values");
	static_assert(std::is_nothrow_default_constructible<V>::value,
	              "latch: the value type must be default constructible without throwing: "
	              "readers make a V to copy the stored bytes into");

	static void *pack(const V &v) noexcept
	{
		void *w = nullptr;

		std::memcpy(&w, &v, sizeof(V));
		return w;
	}

	static V unpack(void *w) noexcept
	{
		V v;

		std::memcpy(&v, &w, sizeof(V));
		return v;
	}
};

/*
 * The array a C batch call takes, made from a wrapper's array: in place
 * for one element (a one-change batch allocates nothing in the C library
 * either), else on the heap, without throwing.  ok() is false when the
 * memory was not available.
 */
template <typename T> class scratch
{
      public:
	explicit scratch(std::size_t n) noexcept
	    : heap_(n > 1 ? new (std::nothrow) T[n] : nullptr), data_(n > 1 ? heap_.get() : &one_)
	{
	}

	bool ok() const noexcept
	{
		return data_ != nullptr;
	}

	T &operator[](std::size_t i) noexcept
	{
		return data_[i];
	}

	const T *data() const noexcept
	{
		return data_;
	}

      private:
	T one_{};
	std::unique_ptr<T[]> heap_;
	T *data_;
};

/*
 * A batch call of the C library: @items, each converted by @convert, in a
 * scratch array (see scratch), applied to @m by @call, which returns 0 or
 * a negative errno and sets its last argument to the first bad item's
 * index on error.  failed() is that index, else the number of items.
 */
template <typename M, typename C, typename T, typename Convert>
commit_status batch(int (*call)(M *, const C *, std::size_t, std::size_t *), M *m,
                    array_view<T> items, Convert convert) noexcept
{
	std::size_t n = items.size(), failed = n;
	scratch<C> c(n);

	if (!c.ok())
		return commit_status(status(std::errc::not_enough_memory), n);
	for (std::size_t i = 0; i < n; i++)
		c[i] = convert(items.data()[i]);
	status s = from_c(call(m, c.data(), n, &failed));
	return commit_status(s, s ? n : failed);
}

/* The group of a batched lookup's C call whose answers come from one state. */
constexpr std::size_t lookup_group = 64;

/*
 * A batched lookup of @n items in groups of lookup_group: @lookup(at, k)
 * answers items at..at+k-1 (one C call, its outputs on the stack) and
 * returns its hits.  Returns all the hits.
 */
template <typename F> std::size_t by_groups(std::size_t n, F lookup) noexcept
{
	std::size_t hits = 0;

	for (std::size_t at = 0; at < n; at += lookup_group)
		hits += lookup(at, n - at < lookup_group ? n - at : lookup_group);
	return hits;
}

} // namespace detail

} // namespace latch

#endif /* LATCH_COMMON_HPP */
