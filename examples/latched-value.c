/* SPDX-License-Identifier: MIT */
/*
 * latched-value: clock calibration that any context can read untorn.  A
 * writer recalibrates now and then; a reader thread converts cycles to
 * nanoseconds with whatever calibration is current, and checks that it
 * never sees half of an old one and half of a new one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <latch/value.h>

struct clock_params {
	uint64_t base_ns, base_cycles;
	uint32_t mult, shift;
	uint64_t check; /* base_ns ^ base_cycles ^ mult, to spot a torn read */
};

/* All-zero is a valid initial state. */
static LATCH_VALUE(struct clock_params) params;
static int done, torn;
static long reads;

/* Any context, even a signal handler: never waits. */
static uint64_t cycles_to_ns(uint64_t cycles, struct clock_params *p)
{
	latch_value_load(&params, p);
	return p->base_ns + (((cycles - p->base_cycles) * p->mult) >> p->shift);
}

static void *reader(void *arg)
{
	(void)arg;
	/* Relaxed: a stop request; pthread_join() orders the counters. */
	while (!LATCH_LOAD_RELAXED(&done)) {
		struct clock_params p;

		(void)cycles_to_ns(123456, &p);
		torn += p.check != (p.base_ns ^ p.base_cycles ^ p.mult);
		reads++;
	}
	return NULL;
}

int main(void)
{
	pthread_t thread;
	struct clock_params p;
	uint64_t ns;

	pthread_create(&thread, NULL, reader, NULL);
	for (uint32_t i = 1; i <= 100000; i++) {
		struct clock_params next = { 1000ull * i, 3000ull * i, i, 10, 0 };

		next.check = next.base_ns ^ next.base_cycles ^ next.mult;
		latch_value_store(&params, &next); /* one writer: no lock needed */
	}
	LATCH_STORE_RELAXED(&done, 1); /* Relaxed: a stop request (see reader()). */
	pthread_join(thread, NULL);

	ns = cycles_to_ns(300000000, &p);
	printf("calibration %u: 300000000 cycles = %llu ns; %ld reads, %d torn\n", p.mult,
	       (unsigned long long)ns, reads, torn);
	printf("latched-value: %s\n", torn || p.mult != 100000 ? "WRONG" : "all answers right");
	return torn || p.mult != 100000 ? 1 : 0;
}
