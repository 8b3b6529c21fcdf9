/* SPDX-License-Identifier: MIT */
/*
 * Latched values: the all-zero initial state loads as a zero value; every
 * store of random bytes loads back exactly, for types of 1, 3, 8, 13, 64
 * and 1000 bytes and for an over-aligned type; and a reader thread that
 * loads while a writer thread stores never sees a torn value (every word
 * of a snapshot holds the same count) nor one older than its last.  The
 * writer goes on until the reader has made 1000 loads.  Each argument of
 * latch_value_store() and latch_value_load() is evaluated exactly once.
 *
 * Overrides: LATCH_TEST_VALUE_STORES (stores in the threaded part,
 * default 200000).
 */
#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include <latch/value.h>

#include "check.h"

struct three {
	char c[3];
};
struct thirteen {
	char c[13];
};
struct sixty_four {
	unsigned long long w[8];
};
struct thousand {
	char c[1000];
};
struct aligned {
	alignas(32) char c[40];
};

static LATCH_VALUE(char) v1;
static LATCH_VALUE(struct three) v3;
static LATCH_VALUE(unsigned long long) v8;
static LATCH_VALUE(struct thirteen) v13;
static LATCH_VALUE(struct sixty_four) v64;
static LATCH_VALUE(struct thousand) v1000;
static LATCH_VALUE(struct aligned) valigned;

static void fill(void *p, size_t size, struct test_rng *rng)
{
	for (size_t i = 0; i < size; i++)
		((unsigned char *)p)[i] = (unsigned char)test_rng_next(rng);
}

static bool all_zero(const void *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (((const unsigned char *)p)[i])
			return false;
	return true;
}

/* Initial zero, then stores of random values load back exactly. */
#define CHECK_ROUND_TRIPS(v, T, rng)                                                               \
	do {                                                                                       \
		T in, out;                                                                         \
		fill(&out, sizeof(out), rng);                                                      \
		latch_value_load(v, &out);                                                         \
		CHECK(all_zero(&out, sizeof(out)), "%s: initial value is not zero", #T);           \
		for (int i = 0; i < 50; i++) {                                                     \
			fill(&in, sizeof(in), rng);                                                \
			latch_value_store(v, &in);                                                 \
			latch_value_load(v, &out);                                                 \
			CHECK(memcmp(&in, &out, sizeof(in)) == 0,                                  \
			      "%s: store %d loads back different", #T, i);                         \
		}                                                                                  \
	} while (0)

#define WORDS 13
struct snapshot {
	unsigned long word[WORDS]; /* every word holds the same count */
};
static LATCH_VALUE(struct snapshot) shared;
static long stores, loads;

static void *reader(void *arg)
{
	unsigned long last = 0;
	bool *done = arg;

	/* Relaxed: a stop request; pthread_join() orders what follows. */
	while (!LATCH_LOAD_RELAXED(done)) {
		struct snapshot s;

		latch_value_load(&shared, &s);
		for (int i = 1; i < WORDS; i++)
			CHECK(s.word[i] == s.word[0], "torn load: word %d is %lu, word 0 is %lu", i,
			      s.word[i], s.word[0]);
		CHECK(s.word[0] >= last, "load went back in time: %lu after %lu", s.word[0], last);
		last = s.word[0];
		/* Relaxed: a progress count; the writer only waits for it to grow. */
		LATCH_STORE_RELAXED(&loads, loads + 1);
	}
	return NULL;
}

/* Arguments with side effects: each must happen once per call. */
typedef LATCH_VALUE(struct three) latched_three;
static latched_three slots[4];
static int picks;

static latched_three *pick_slot(void)
{
	return &slots[picks++];
}

static struct three *pick_three(struct three *t)
{
	picks++;
	return t;
}

static void check_arguments_evaluated_once(void)
{
	struct three in = { { 'o', 'n', 'e' } }, out = { { 0 } };
	int i = 0;

	latch_value_store(&slots[i++], &in);
	CHECK(i == 1, "latch_value_store(&slots[i++], ...) advanced i by %d", i);
	latch_value_load(&slots[--i], &out);
	CHECK(i == 0 && memcmp(&out, &in, sizeof(in)) == 0,
	      "latch_value_load(&slots[--i], ...) moved i to %d or loaded another slot", i);

	picks = 1;
	latch_value_store(pick_slot(), pick_three(&in));
	CHECK(picks == 3, "a store evaluated its arguments %d times, not 2", picks - 1);
	picks = 1;
	latch_value_load(pick_slot(), pick_three(&out));
	CHECK(picks == 3, "a load evaluated its arguments %d times, not 2", picks - 1);
	CHECK(memcmp(&out, &in, sizeof(in)) == 0, "the load read another slot than the store");
}

int main(void)
{
	struct test_rng rng = { 42 };
	pthread_t thread;
	bool done = false;

	CHECK_ROUND_TRIPS(&v1, char, &rng);
	CHECK_ROUND_TRIPS(&v3, struct three, &rng);
	CHECK_ROUND_TRIPS(&v8, unsigned long long, &rng);
	CHECK_ROUND_TRIPS(&v13, struct thirteen, &rng);
	CHECK_ROUND_TRIPS(&v64, struct sixty_four, &rng);
	CHECK_ROUND_TRIPS(&v1000, struct thousand, &rng);
	CHECK_ROUND_TRIPS(&valigned, struct aligned, &rng);
	CHECK((uintptr_t)&valigned.copy[1] % 32 == 0, "copies keep the type's alignment");
	check_arguments_evaluated_once();

	stores = test_env_long("LATCH_TEST_VALUE_STORES", 200000);
	CHECK(pthread_create(&thread, NULL, reader, &done) == 0, "pthread_create");
	/* Store at least @stores times, and until the reader loaded 1000 times. */
	/* Relaxed: the reader's progress count orders nothing. */
	for (long n = 1; n <= stores || LATCH_LOAD_RELAXED(&loads) < 1000; n++) {
		struct snapshot s;

		for (int i = 0; i < WORDS; i++)
			s.word[i] = (unsigned long)n;
		latch_value_store(&shared, &s);
	}
	LATCH_STORE_RELAXED(&done, true); /* Relaxed: a stop request (see reader()). */
	pthread_join(thread, NULL);
	printf("test-value: round trips for 7 types, %ld stores against a concurrent reader: all "
	       "passed\n",
	       stores);
	return 0;
}
