/* SPDX-License-Identifier: MIT */
/*
 * latch/detail/value.h - the inline machinery of <latch/value.h>.
 *
 * Not part of the API: latch_value_store() and latch_value_load() are
 * macros that expand to the functions here, so user code compiles them,
 * but nothing here may be called, named or relied on directly; it
 * changes without notice.  Include <latch/value.h>.
 */
#ifndef LATCH_DETAIL_VALUE_H
#define LATCH_DETAIL_VALUE_H

/* Included by <latch/value.h> once what it needs is declared, never on its own. */
#ifndef LATCH_VALUE_H
#error "include <latch/value.h>, not <latch/detail/value.h>"
#endif

#include <stddef.h>
#include <string.h>

#include <latch/seq.h>

#ifdef __cplusplus
#include <type_traits>

extern "C" {
#endif

/* The number of words a copy of a T takes. */
#define LATCH_VALUE_WORDS_(T)                                                                      \
	((sizeof(T) + sizeof(LATCH_VALUE_WORD) - 1) / sizeof(LATCH_VALUE_WORD))

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

/* latch_value_load() on the parts of a LATCH_VALUE. */
static inline void latch_value_load_(const struct latch_seq *seq, const LATCH_VALUE_WORD *copy0,
                                     const LATCH_VALUE_WORD *copy1, void *dst, size_t size)
{
	LATCH_SEQ_READ_(seq, idx) latch_value_get_(dst, idx ? copy1 : copy0, size);
}

#ifdef __cplusplus
}

/* C++: function templates evaluate each argument once and check its type. */
template <typename V, typename S> inline void latch_value_store_cxx_(V *v, S *src)
{
	typedef decltype(std::remove_cv<V>::type::latch_value_of_::value) T;

	static_assert(std::is_same<typename std::remove_cv<S>::type, T>::value,
	              "latch_value_store(v, src): src must point to a T, the type of the "
	              "LATCH_VALUE(T) that v points to");
	latch_value_store_(&v->seq, v->copy[0].word, v->copy[1].word, src, sizeof(T));
}

template <typename V, typename D> inline void latch_value_load_cxx_(V *v, D *dst)
{
	typedef decltype(std::remove_cv<V>::type::latch_value_of_::value) T;

	static_assert(std::is_same<typename std::remove_volatile<D>::type, T>::value,
	              "latch_value_load(v, dst): dst must point to a modifiable T, the type of the "
	              "LATCH_VALUE(T) that v points to");
	latch_value_load_(&v->seq, v->copy[0].word, v->copy[1].word, dst, sizeof(T));
}

#endif /* __cplusplus */

#endif /* LATCH_DETAIL_VALUE_H */
