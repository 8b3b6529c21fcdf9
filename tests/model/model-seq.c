/* SPDX-License-Identifier: MIT */
/*
 * GenMC harness (a): the counter protocol of <latch/seq.h>.
 *
 * Two copies of a pair of words, changed only through latch_seq_write()
 * (change the idle copy, flip, replay onto the copy readers left) and
 * read only through latch_seq_read().  The words are relaxed atomics, as
 * in every latched structure: the counter alone orders them.  The writer
 * stores MODEL_UPDATES pairs (v, v), v = 1, 2, ...; a reader loads the
 * pair MODEL_READS times.
 *
 * Checked: every load returns a pair the writer stored whole (a == b, so
 * never half of one update and half of another, and never a value from a
 * copy that was still being replayed), and loads by one reader never go
 * back in time (v does not decrease).
 *
 * With one update the replay alone already races with a reader still on
 * the copy the flip left, so both halves of the protocol are exercised:
 * the flip's release store and the reader's acquire load publish the copy
 * the flip names (design.md 3.2 W2, 3.3 R1), the flip's release fence and
 * the reader's acquire fence make a reader that saw a replayed word see
 * the flip and retry (W3, R3 + R4).
 */
#include "model.h" /* first: it shims what latch/seq.h would take from ThreadSanitizer */

#include <latch/seq.h>

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

static struct latch_seq seq = LATCH_SEQ_INIT;
static struct pair copy[2];

/* latch_seq_write()'s change: store (v, v) into copy @idx. */
static void store_pair(void *ctx, unsigned idx, bool replay)
{
	unsigned long v = *(const unsigned long *)ctx;

	(void)replay;
	/* Relaxed: the latch orders them (release store and fence of the flip). */
	LATCH_STORE_RELAXED(&copy[idx].a, v);
	LATCH_STORE_RELAXED(&copy[idx].b, v);
}

/* latch_seq_read()'s attempt: load copy @idx. */
static void load_pair(void *ctx, unsigned idx)
{
	struct pair *p = ctx;

	/* Relaxed: latch_seq_read_retry()'s acquire fence orders them. */
	p->a = LATCH_LOAD_RELAXED(&copy[idx].a);
	p->b = LATCH_LOAD_RELAXED(&copy[idx].b);
}

static void *writer(void *arg)
{
	(void)arg;
	for (unsigned long v = 1; v <= MODEL_UPDATES; v++)
		latch_seq_write(&seq, store_pair, &v);
	return NULL;
}

static void *reader(void *arg)
{
	unsigned long last = 0;

	(void)arg;
	for (int i = 0; i < MODEL_READS; i++) {
		struct pair p;

		latch_seq_read(&seq, load_pair, &p);
		assert(p.a == p.b);           /* one update's pair, whole */
		assert(p.a <= MODEL_UPDATES); /* a value the writer stored */
		assert(p.a >= last);          /* not older than the last load */
		last = p.a;
	}
	return NULL;
}

int main(void)
{
	pthread_t r[MODEL_READERS], w;

	latch_seq_init(&seq);
	w = model_spawn(writer, NULL);
	for (int i = 0; i < MODEL_READERS; i++)
		r[i] = model_spawn(reader, NULL);
	model_join(w);
	for (int i = 0; i < MODEL_READERS; i++)
		model_join(r[i]);
	return 0;
}
