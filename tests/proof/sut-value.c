/* SPDX-License-Identifier: MIT */
/*
 * The latched value as a structure under test: the set is a bitmap of
 * SUT_VALUE_BITS bits held in one LATCH_VALUE; insert and erase store the
 * whole bitmap with the key's bit flipped, a lookup loads it and tests the
 * key's bit.
 */
#include <string.h>

#include <latch/value.h>

#include "check.h"
#include "sut.h"

#define SUT_VALUE_BITS 1024
#define WORD_BITS      (8 * sizeof(unsigned long))

struct sut_bits {
	unsigned long word[SUT_VALUE_BITS / WORD_BITS];
};

struct sut_value {
	LATCH_VALUE(struct sut_bits) v;
	long keys;
};

static long bits_key(const struct sut_bits *b, long key)
{
	if (key < 0 || key >= SUT_VALUE_BITS)
		return SUT_ABSENT;
	return b->word[key / WORD_BITS] >> (key % WORD_BITS) & 1 ? key : SUT_ABSENT;
}

static size_t value_size(long keys)
{
	(void)keys;
	return sizeof(struct sut_value);
}

static void value_init(void *s, long keys)
{
	struct sut_value *t = s;

	CHECK(keys <= SUT_VALUE_BITS, "the latched value holds at most %d keys", SUT_VALUE_BITS);
	memset(t, 0, sizeof(*t)); /* all-zero: an empty bitmap */
	t->keys = keys;
}

/* Insert and erase both flip the key's bit (the harness knows which applies). */
static void value_toggle(void *s, long key)
{
	struct sut_value *t = s;
	struct sut_bits b;

	latch_value_load(&t->v, &b);
	b.word[key / WORD_BITS] ^= 1ul << (key % WORD_BITS);
	latch_value_store(&t->v, &b);
}

static void value_insert(void *s, long key)
{
	value_toggle(s, key);
}

static void value_erase(void *s, long key)
{
	value_toggle(s, key);
}

static long value_find(const void *s, long key)
{
	const struct sut_value *t = s;
	struct sut_bits b;

	latch_value_load(&t->v, &b);
	return bits_key(&b, key);
}

static unsigned value_read_begin(const void *s)
{
	const struct sut_value *t = s;

	return latch_seq_read_begin(&t->v.seq);
}

static long value_attempt(const void *s, unsigned start, long key)
{
	const struct sut_value *t = s;
	struct sut_bits b;

	latch_value_get_(&b, t->v.copy[start & 1u].word, sizeof(b));
	return bits_key(&b, key);
}

static bool value_read_retry(const void *s, unsigned start)
{
	const struct sut_value *t = s;

	return latch_seq_read_retry(&t->v.seq, start);
}

/* A raw read of copy @idx: one step. */
static long value_descend(const void *s, unsigned idx, long key, unsigned *steps)
{
	*steps = 1;
	return value_attempt(s, idx, key);
}

/* A store writes the idle copy whole and replays nothing onto the other one. */
const struct sut_ops sut_latched_value = {
	.name = "latched-value",
	.size = value_size,
	.init = value_init,
	.insert = value_insert,
	.erase = value_erase,
	.find = value_find,
	.read_begin = value_read_begin,
	.read_attempt = value_attempt,
	.read_retry = value_read_retry,
	.copies = 2,
	.descend = value_descend,
	.idle_copy_lags = true,
};
