// SPDX-License-Identifier: MIT
/*
 * latch::value<T> (<latch/value.hpp>): the all-zero initial value (whatever
 * T's constructor says), constant initialisation, an initial value, loads
 * and stores, and loads from a signal handler that interrupts the writer,
 * which must never see a mix of two stored values.
 *
 * Override: LATCH_SIGNAL_MS (signal run time, default 300).
 */
#include <latch/value.hpp>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "api/signal-storm.h"

// Several words, with a default member initialiser that loads never run.
struct calibration {
	std::uint64_t base = 7;
	std::uint64_t check = ~std::uint64_t{ 7 };
	std::uint32_t mult = 1;
};

using latched = latch::value<calibration>;
static_assert(!std::is_copy_constructible<latched>::value &&
                  !std::is_move_constructible<latched>::value,
              "a value stays where readers find it");
static_assert(!std::is_copy_assignable<latched>::value, "a value is not assigned");
static_assert(noexcept(std::declval<const latched &>().load()), "load is noexcept");
static_assert(noexcept(std::declval<latched &>().store(calibration())), "store is noexcept");

#if defined(__cpp_constinit)
static constinit latched shared; // C++20: proven constant-initialised
#else
static latched shared;
#endif

static void on_tick(int)
{
	storm_tick();
	calibration c = shared.load();

	SIG_CHECK(c.check == ~c.base && c.mult == (std::uint32_t)c.base * 3, "a torn load");
}

int main()
{
	// All zero bytes at first, whatever calibration() would give.
	calibration c = shared.load();
	CHECK(c.base == 0 && c.check == 0 && c.mult == 0, "the initial value is not all zero");

	latch::value<calibration> started(calibration{});
	c = started.load();
	CHECK(c.base == 7 && c.check == ~std::uint64_t{ 7 } && c.mult == 1, "the initial value");

	latch::value<int> small;
	CHECK(small.load() == 0, "zero");
	small.store(-5);
	CHECK(small.load() == -5, "a stored int");

	// The writer stores consistent values as fast as it can; the handler
	// interrupts it and checks each load.
	long ms = test_env_long("LATCH_SIGNAL_MS", 300);
	shared.store(calibration{ 0, ~std::uint64_t{ 0 }, 0 });
	storm_handle(on_tick);
	timer_t timer = storm_start(20000);
	struct timespec t0, t;
	std::uint64_t i = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		i++;
		shared.store(calibration{ i, ~i, (std::uint32_t)i * 3 });
		storm_progress();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	timer_delete(timer);
	signal(STORM_SIGNAL, SIG_IGN);
	c = shared.load();
	CHECK(c.base == i && c.check == ~i, "the last stored value");
	std::printf("test-value-cxx: %llu stores, every load whole\n", (unsigned long long)i);
	return 0;
}
