// SPDX-License-Identifier: MIT
/*
 * What the C++ wrappers' tests share: a new, empty handle; a small struct
 * as a value type; and signal storms (signal-storm.h), a writer's
 * updates as fast as it can make them, interrupted by a timer signal
 * whose handler checks what it reads.
 */
#ifndef LATCH_TESTS_CXX_SUPPORT_HPP
#define LATCH_TESTS_CXX_SUPPORT_HPP

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <utility>

#include "signal-storm.h"

// A new, empty map of the wrapper type Map; fails the test when out of memory.
template <typename Map> Map make_empty()
{
	auto m = Map::create();

	CHECK(m && m->valid() && m->empty() && m->size() == 0, "create");
	return std::move(*m);
}

// A value type that is neither a pointer nor an integer, smaller than a word.
struct small {
	std::uint16_t a;
	std::uint8_t b;
	bool operator==(const small &o) const
	{
		return a == o.a && b == o.b;
	}
};

// How many times the storm's handler ran.
static volatile sig_atomic_t storm_runs;

template <void (*Handler)(int)> void storm_counted(int sig)
{
	storm_tick();
	Handler(sig);
	storm_runs = storm_runs + 1; // not ++: C++20 deprecates it on volatile
}

// Calls @update(u) for u = 0, 1, ... for @ms milliseconds while a timer
// signals this thread every 20 microseconds (slower if the updates stall:
// storm_tick()) and Handler takes the signal;
// then ignores the signal, fails the test if Handler never ran, prints
// the counts and returns the number of updates.
template <void (*Handler)(int), typename Update> unsigned long storm_run(long ms, Update update)
{
	struct timespec t0, t;
	unsigned long u = 0;

	storm_runs = 0;
	storm_handle(storm_counted<Handler>);
	timer_t timer = storm_start(20000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		update(u++);
		storm_progress();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	timer_delete(timer);
	signal(STORM_SIGNAL, SIG_IGN);
	CHECK(storm_runs > 0, "no signal arrived in %ld ms", ms);
	std::printf("signal: %lu updates, %ld lookups from the handler, every %ld us\n", u,
	            (long)storm_runs, storm_period_ns() / 1000);
	return u;
}

#endif /* LATCH_TESTS_CXX_SUPPORT_HPP */
