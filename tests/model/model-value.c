/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (b): the latched value of <latch/value.h>.
 *
 * LATCH_VALUE(struct pair), two words.  The writer stores MODEL_UPDATES
 * pairs (v, v), v = 1, 2, ..., with latch_value_store(), which writes the
 * idle copy only and flips once (no replay); a reader loads it
 * MODEL_READS times with latch_value_load().
 *
 * Checked: a load never returns a torn pair (a == b), only values stored
 * (or the all-zero initial one), and one reader's loads never go back in
 * time.
 *
 * Two updates are needed for the reader-side fences to matter: the first
 * store writes copy 1, which no reader of copy 0 looks at; the second
 * writes copy 0, under a reader that started before the first flip.  Its
 * words are relaxed atomics: only the flip's release fence and the
 * reader's acquire fence make such a reader see the flip and retry
 * (design.md 3.2 W3, 3.3 R3 + R4), and only the flip's release store and
 * the reader's acquire load make the copy a reader is sent to complete
 * (W2, R1).  Nothing else in the value publishes its words.
 */
#include "model.h" /* first: it shims what latch/value.h would take from ThreadSanitizer */

#include <latch/value.h>

/*
 * Shim: GenMC accepts memcpy() only with a length it knows at compile
 * time, and latch_value_put_() / latch_value_get_() compute the length of
 * the tail word at run time (the same, sizeof(unsigned long), for every
 * word of a T made of whole words like the pair below).  run.sh compiles
 * this harness with -fno-builtin-memcpy, so those calls come here.  They
 * only ever copy between a word in a local variable and the caller's own
 * T, never shared memory: the latch's loads and stores of the copies are
 * the atomic ones in value.h, untouched.
 */
void *memcpy(void *dst, const void *src, size_t n)
{
	assert(n % sizeof(unsigned long) == 0); /* whole words only */
	for (size_t i = 0; i < n / sizeof(unsigned long); i++)
		((unsigned long *)dst)[i] = ((const unsigned long *)src)[i];
	return dst;
}

#ifndef MODEL_UPDATES
#define MODEL_UPDATES 2
#endif
#ifndef MODEL_READS
#define MODEL_READS 2
#endif
#ifndef MODEL_READERS
#define MODEL_READERS 1
#endif

struct pair {
	unsigned long a, b;
};

static LATCH_VALUE(struct pair) value; /* all-zero: the pair (0, 0) */

static void *writer(void *arg)
{
	(void)arg;
	for (unsigned long v = 1; v <= MODEL_UPDATES; v++) {
		struct pair p = { v, v };

		latch_value_store(&value, &p);
	}
	return NULL;
}

static void *reader(void *arg)
{
	unsigned long last = 0;

	(void)arg;
	for (int i = 0; i < MODEL_READS; i++) {
		struct pair p;

		latch_value_load(&value, &p);
		assert(p.a == p.b);           /* never torn */
		assert(p.a <= MODEL_UPDATES); /* a value stored, or the initial one */
		assert(p.a >= last);          /* not older than the last load */
		last = p.a;
	}
	return NULL;
}

int main(void)
{
	pthread_t r[MODEL_READERS], w;

	w = model_spawn(writer, NULL);
	for (int i = 0; i < MODEL_READERS; i++)
		r[i] = model_spawn(reader, NULL);
	model_join(w);
	for (int i = 0; i < MODEL_READERS; i++)
		model_join(r[i]);
	return 0;
}
