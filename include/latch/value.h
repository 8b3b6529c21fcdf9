/* SPDX-License-Identifier: MIT */
/*
 * latch/value.h - a latched value: a plain struct that any context reads
 * untorn, without waiting.
 *
 * The timekeeping use: clock calibration, a configuration, a snapshot,
 * written now and then by one writer and read from anywhere, including a
 * signal handler that interrupted that writer.
 *
 *	struct clock_params { uint64_t base_ns, base_cycles; uint32_t mult, shift; };
 *	static LATCH_VALUE(struct clock_params) params;   // all-zero: a zero value
 *
 *	latch_value_store(&params, &new_params);          // writer
 *	latch_value_load(&params, &snapshot);             // any context
 *
 * LATCH_VALUE(T) holds two copies of T and a latch sequence counter.
 * Copies go word by word through relaxed atomic loads and stores, so a
 * reader racing with the writer is not a data race in C11 terms, and the
 * latch makes each load return one whole stored value.  T may have any
 * size and alignment; in C++ it must be trivially copyable.
 *
 * Synchronization table:
 *
 *	call                     context                 serialize with
 *	latch_value_load()       any, signal handlers    nothing
 *	latch_value_store()      writer                  other stores (caller)
 */
#ifndef LATCH_VALUE_H
#define LATCH_VALUE_H

#include <stddef.h>
#include <string.h>

#include <latch/seq.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The unit the copies are read and written in. */
#define LATCH_VALUE_WORD unsigned long

/**
 * LATCH_VALUE(T) - the type of a latched T: a type specifier, as in
 * "static LATCH_VALUE(struct clock_params) v;".  All-zero is a valid
 * initial state (a T of all zero bytes).  Contents are private.
 */
#define LATCH_VALUE(T)                                                                             \
	struct {                                                                                   \
		struct latch_seq seq;                                                              \
		union {                                                                            \
			T value; /* gives the copy T's alignment; never accessed */                \
			LATCH_VALUE_WORD                                                           \
			word[(sizeof(T) + sizeof(LATCH_VALUE_WORD) - 1) /                          \
			     sizeof(LATCH_VALUE_WORD)];                                            \
		} copy[2];                                                                         \
	}

/*
 * Store @size bytes from @src into the words of one copy.  The tail word
 * is padded with zeros.  Writer side.
 */
static inline void latch_value_put_(LATCH_VALUE_WORD *copy, const void *src, size_t size)
{
	for (size_t off = 0; off < size; off += sizeof(LATCH_VALUE_WORD)) {
		LATCH_VALUE_WORD w = 0;
		size_t left = size - off;

		memcpy(&w, (const char *)src + off, left < sizeof(w) ? left : sizeof(w));
		/* Relaxed: the flip before this copy (its release fence) and the
		 * one after it (its release store) order the stores. */
		LATCH_STORE_RELAXED(&copy[off / sizeof(w)], w);
	}
}

/* Load @size bytes of one copy into @dst.  Reader side, any context. */
static inline void latch_value_get_(void *dst, const LATCH_VALUE_WORD *copy, size_t size)
{
	for (size_t off = 0; off < size; off += sizeof(LATCH_VALUE_WORD)) {
		/* Relaxed: latch_seq_read_retry()'s acquire fence orders these
		 * loads before its check of the count. */
		LATCH_VALUE_WORD w = LATCH_LOAD_RELAXED(&copy[off / sizeof(w)]);
		size_t left = size - off;

		memcpy((char *)dst + off, &w, left < sizeof(w) ? left : sizeof(w));
	}
}

/*
 * latch_value_store() on the parts of a LATCH_VALUE: the new value goes
 * into the idle copy only, then one flip sends readers to it.  The copy
 * they leave keeps the old value, which no reader that starts later is
 * sent to; the next store overwrites it whole, so nothing is replayed
 * onto it.  One copy written per store.
 */
static inline void latch_value_store_(struct latch_seq *seq, LATCH_VALUE_WORD *copy0,
                                      LATCH_VALUE_WORD *copy1, const void *src, size_t size)
{
	/* The stores to the idle copy come after the previous flip's release
	 * fence, so a reader still on it from before that flip retries. */
	latch_value_put_(latch_seq_write_begin(seq) ? copy1 : copy0, src, size);
	/* Release: the copy just written is complete for readers sent to it. */
	(void)latch_seq_write_flip(seq);
}

/* What latch_value_load_() hands to each attempt. */
struct latch_value_load_ctx_ {
	const LATCH_VALUE_WORD *copy[2];
	void *dst;
	size_t size;
};

/* One attempt of latch_value_load_() on copy @idx. */
static inline void latch_value_load_attempt_(void *arg, unsigned idx)
{
	const struct latch_value_load_ctx_ *c = (const struct latch_value_load_ctx_ *)arg;

	latch_value_get_(c->dst, c->copy[idx], c->size);
}

/* latch_value_load() on the parts of a LATCH_VALUE. */
static inline void latch_value_load_(const struct latch_seq *seq, const LATCH_VALUE_WORD *copy0,
                                     const LATCH_VALUE_WORD *copy1, void *dst, size_t size)
{
	struct latch_value_load_ctx_ c = { { copy0, copy1 }, dst, size };

	latch_seq_read(seq, latch_value_load_attempt_, &c);
}

/**
 * latch_value_store() - make *@src (a T) the value of @v (a LATCH_VALUE(T) *).
 *
 * Readers see the old value or the new one, never a mix.  Does not
 * compile unless *@src is assignable to a T.
 * Cost O(sizeof(T)) (two copies), never waits.  Writer only: stores to
 * @v must be serialized by the caller.
 */
#define latch_value_store(v, src)                                                                  \
	((void)sizeof((v)->copy[0].value = *(src)),                                                \
	 latch_value_store_(&(v)->seq, (v)->copy[0].word, (v)->copy[1].word, (src),                \
	                    sizeof((v)->copy[0].value)))

/**
 * latch_value_load() - copy the value of @v (a LATCH_VALUE(T) *) to *@dst.
 *
 * Returns one whole stored value (or the all-zero initial one), never a
 * mix of two; right on its first attempt when it interrupted the writer.
 * *@dst must be a T.
 * Cost O(sizeof(T)) per attempt, never waits.  Any context, including
 * signal handlers; needs no serialization.
 */
#define latch_value_load(v, dst)                                                                   \
	((void)sizeof(*(dst) = (v)->copy[0].value),                                                \
	 latch_value_load_(&(v)->seq, (v)->copy[0].word, (v)->copy[1].word, (dst),                 \
	                   sizeof((v)->copy[0].value)))

#ifdef __cplusplus
}
#endif

#endif /* LATCH_VALUE_H */
