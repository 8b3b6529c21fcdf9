/* SPDX-License-Identifier: MIT */
/*
 * Support for tests whose signal handlers check answers: a timer that
 * signals one thread (the caller) periodically, and a check that can
 * fail from inside a handler.
 */
#ifndef LATCH_TESTS_SIGNAL_STORM_H
#define LATCH_TESTS_SIGNAL_STORM_H

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* The signal the timers send. */
#define STORM_SIGNAL SIGPROF

/* Failure inside a handler: write(2) and _exit(2) are async-signal-safe. */
#define SIG_CHECK(cond, msg)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			static const char text[] = "signal handler: " msg " (" #cond ")\n";        \
			(void)!write(2, text, sizeof(text) - 1);                                   \
			_exit(1);                                                                  \
		}                                                                                  \
	} while (0)

/* Run @handler for STORM_SIGNAL, with no other signal blocked while it runs. */
static inline void storm_handle(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(STORM_SIGNAL, &sa, NULL) == 0, "sigaction");
}

/*
 * A timer that sends STORM_SIGNAL to the calling thread every @period_ns
 * nanoseconds.  Where per-thread timers are unavailable the test exits
 * with @missing: TEST_SKIP, or 1 for a test that must not be skipped.
 */
static inline timer_t storm_start_or(long period_ns, int missing)
{
	struct itimerspec every = { { 0, period_ns }, { 0, period_ns } };
	struct sigevent sev;
	timer_t timer;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = STORM_SIGNAL;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
		perror(missing == TEST_SKIP ? "skipped: timer_create(SIGEV_THREAD_ID)"
		                            : "timer_create(SIGEV_THREAD_ID)");
		exit(missing);
	}
	CHECK(timer_settime(timer, 0, &every, NULL) == 0, "timer_settime");
	return timer;
}

/* storm_start_or(), skipping the test where per-thread timers are unavailable. */
static inline timer_t storm_start(long period_ns)
{
	return storm_start_or(period_ns, TEST_SKIP);
}

#endif /* LATCH_TESTS_SIGNAL_STORM_H */
