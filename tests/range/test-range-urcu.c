/* SPDX-License-Identifier: MIT */
/*
 * Safe reclamation with liburcu (flavour memb): reader threads, and the
 * signal handlers that a per-thread timer runs on them, resolve addresses
 * inside rcu_read_lock() while a writer inserts ranges whose values point
 * to freshly allocated objects, erases them (one at a time and by batches
 * that replace a range with another), waits for a grace period
 * (synchronize_rcu() or call_rcu()) and frees the objects.  Every range a
 * reader gets must hold the address, and its object must still be alive
 * (its magic intact) and describe the same range; built with ASan, any
 * use after free stops the test.  At the end every object is freed
 * (LeakSanitizer).
 *
 * Overrides: LATCH_TEST_URCU_OPS (writer operations, default 200000).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>

#include <latch/atomic.h>
#include <latch/range.h>

#include "signal-storm.h"

#define SLOTS     256
#define SLOT_SIZE 64
#define READERS   2
#define ALIVE     0xa11fe5eedUL
#define DEAD      0xdeadUL

struct blob {
	uintptr_t start, end; /* the range the object is mapped at */
	struct rcu_head rcu;
	unsigned long magic;
};

static struct latch_range_map map;
static struct blob *slot[SLOTS]; /* the writer's own view */
static volatile int stop;
static long lookups[READERS], handled[READERS];

/* One lookup as a reader does it; returns true when a range was found. */
static bool resolve(uintptr_t addr)
{
	struct latch_range r;
	bool hit;

	urcu_memb_read_lock();
	hit = latch_range_find(&map, addr, &r);
	if (hit) {
		const struct blob *b = r.value;

		SIG_CHECK(r.start <= addr && addr < r.end, "a range misses the address");
		SIG_CHECK(b->magic == ALIVE, "an object was used after it was freed");
		SIG_CHECK(b->start == r.start && b->end == r.end, "a range has a stranger's value");
	}
	urcu_memb_read_unlock();
	return hit;
}

static __thread struct test_rng reader_rng;
static __thread unsigned long reader_id;

/* Plain arithmetic on the thread's own state: safe in a signal handler. */
static uintptr_t random_addr(void)
{
	return (uintptr_t)test_rng_below(&reader_rng, SLOTS * SLOT_SIZE);
}

static void on_tick(int sig)
{
	(void)sig;
	storm_tick();
	resolve(random_addr());
	handled[reader_id]++;
}

static void *reader(void *arg)
{
	sigset_t storm;
	timer_t timer;

	reader_id = (unsigned long)(uintptr_t)arg;
	reader_rng.state = reader_id + 1;
	/* The storm signal stays blocked until the thread is registered. */
	urcu_memb_register_thread();
	sigemptyset(&storm);
	sigaddset(&storm, STORM_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &storm, NULL);
	timer = storm_start(100000); /* every 100 microseconds */
	/* Relaxed: a stop request; nothing is read through it. */
	while (!LATCH_LOAD_RELAXED(&stop)) {
		resolve(random_addr());
		lookups[reader_id]++;
		storm_progress();
	}
	timer_delete(timer);
	pthread_sigmask(SIG_BLOCK, &storm, NULL);
	urcu_memb_unregister_thread();
	return NULL;
}

static struct blob *new_blob(long s, struct test_rng *rng)
{
	struct blob *b = malloc(sizeof(*b));

	CHECK(b, "out of memory");
	b->start = (uintptr_t)(s * SLOT_SIZE) + test_rng_below(rng, 8);
	b->end = b->start + 1 + test_rng_below(rng, SLOT_SIZE - 8);
	b->magic = ALIVE;
	return b;
}

static void free_blob(struct blob *b)
{
	b->magic = DEAD;
	free(b);
}

static void free_blob_rcu(struct rcu_head *head)
{
	free_blob(caa_container_of(head, struct blob, rcu));
}

/* After @b left the map: free it once no reader can hold it. */
static void retire(struct blob *b, long op)
{
	if (op % 2) {
		urcu_memb_call_rcu(&b->rcu, free_blob_rcu);
	} else {
		urcu_memb_synchronize_rcu();
		free_blob(b);
	}
}

int main(void)
{
	long ops = test_env_long("LATCH_TEST_URCU_OPS", 200000);
	struct test_rng rng = { 99 };
	pthread_t readers[READERS];
	sigset_t storm;
	long total_lookups = 0, total_handled = 0;

	CHECK(latch_range_map_init(&map) == 0, "init");
	storm_handle(on_tick);
	sigemptyset(&storm);
	sigaddset(&storm, STORM_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &storm, NULL); /* inherited by the readers */
	for (long i = 0; i < READERS; i++)
		CHECK(pthread_create(&readers[i], NULL, reader, (void *)(uintptr_t)i) == 0,
		      "pthread_create");

	for (long op = 0; op < ops; op++) {
		long s = (long)test_rng_below(&rng, SLOTS);
		struct blob *b = slot[s];

		if (!b) {
			b = slot[s] = new_blob(s, &rng);
			CHECK(latch_range_insert(&map, b->start, b->end, b, NULL) == 0, "insert");
		} else if (op % 3 == 0) {
			/* Replace: readers find the old range or the new one. */
			struct blob *next = new_blob(s, &rng);
			const struct latch_range_change swap[2] = {
				{ LATCH_RANGE_ERASE, { b->start, b->end, b } },
				{ LATCH_RANGE_INSERT, { next->start, next->end, next } },
			};

			CHECK(latch_range_commit(&map, swap, 2, NULL) == 0, "replace");
			slot[s] = next;
			retire(b, op);
		} else {
			CHECK(latch_range_erase(&map, b->start) == 0, "erase");
			slot[s] = NULL;
			retire(b, op);
		}
	}

	LATCH_STORE_RELAXED(&stop, 1); /* Relaxed: see the readers' loop; join orders the rest. */
	for (long i = 0; i < READERS; i++) {
		pthread_join(readers[i], NULL);
		total_lookups += lookups[i];
		total_handled += handled[i];
	}
	for (long s = 0; s < SLOTS; s++) {
		if (slot[s]) {
			CHECK(latch_range_erase(&map, slot[s]->start) == 0, "erase");
			retire(slot[s], 0);
		}
	}
	urcu_memb_barrier(); /* every call_rcu() callback has run */
	CHECK(latch_range_size(&map) == 0, "every range was erased");
	latch_range_map_destroy(&map);
	CHECK(total_lookups > 0 && total_handled > 0, "readers and handlers ran (%ld, %ld)",
	      total_lookups, total_handled);
	printf(
	    "test-range-urcu: %ld writer operations, %ld lookups by readers, %ld by their signal "
	    "handlers: no use after free\n",
	    ops, total_lookups, total_handled);
	return 0;
}
