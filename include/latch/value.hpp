// SPDX-License-Identifier: MIT
/*
 * latch/value.hpp - latch::value<T>, the C++ face of <latch/value.h>: a
 * trivially copyable T that any context reads untorn, without waiting,
 * signal handlers that interrupted the writer included.  Header-only,
 * C++17; needs no library.
 *
 *	static latch::value<clock_params> params;   // constant-initialised: all-zero bytes
 *	params.store(next);                         // writer
 *	clock_params p = params.load();             // any context
 *
 * A value holds LATCH_VALUE(T) in place: it can be neither copied nor
 * moved, since readers use its address.  The default constructor is
 * constexpr, so a static or global value is ready before any code runs,
 * even a signal handler that fires during dynamic initialisation; its
 * value is all zero bytes, whatever T's own constructor would do.
 */
#ifndef LATCH_VALUE_HPP
#define LATCH_VALUE_HPP

#include <type_traits>

#include <latch/value.h>

namespace latch
{

/** A latched T (see the top of this file). */
template <typename T> class value
{
      public:
	/** A value of all zero bytes.  O(1), constant initialisation. */
	constexpr value() noexcept = default;

	/** A value holding @initial.  O(sizeof(T)). */
	explicit value(const T &initial) noexcept
	{
		store(initial);
	}

	value(const value &) = delete;
	value &operator=(const value &) = delete;

	/**
	 * load() - one whole stored value (or the initial one), never a mix
	 * of two.  O(sizeof(T)) per attempt, never waits; right on its first
	 * attempt when it interrupted the writer.  Any context, signal
	 * handlers included; needs no serialization.  T's default constructor
	 * runs first, to make the T the bytes are copied into.
	 */
	T load() const noexcept
	{
		static_assert(std::is_nothrow_default_constructible<T>::value,
		              "latch::value<T>::load(): T must be default constructible without "
		              "throwing, to make the T that is returned");
		T out;

		latch_value_load(&v_, &out);
		return out;
	}

	/**
	 * store() - make @v the value; readers see the old value or the new
	 * one, never a mix.  O(sizeof(T)), never waits.  Writer only: stores
	 * must be serialized by the caller, and a store must not run in a
	 * signal handler that may have interrupted another store.
	 */
	void store(const T &v) noexcept
	{
		latch_value_store(&v_, &v);
	}

      private:
	LATCH_VALUE(T) v_{};
};

} // namespace latch

#endif /* LATCH_VALUE_HPP */
