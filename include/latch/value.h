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
 * size and alignment; in C++ it must be trivially copyable (a
 * static_assert says so otherwise), and it may have default member
 * initialisers or its own default constructor, which are never run: the
 * initial value is all zero bytes, as in C.
 *
 * Synchronization table:
 *
 *	call                     context                 serialize with
 *	latch_value_load()       any, signal handlers    nothing
 *	latch_value_store()      writer                  other stores (caller)
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_value(3).
 */
#ifndef LATCH_VALUE_H
#define LATCH_VALUE_H

#include <stddef.h>
#include <string.h>

#include <latch/seq.h>

#ifdef __cplusplus
#include <type_traits>
#endif

/** The unit the copies are read and written in. */
#define LATCH_VALUE_WORD unsigned long

/**
 * LATCH_VALUE(T) - the type of a latched T: a type specifier, as in
 * "static LATCH_VALUE(struct clock_params) v;".  All-zero is a valid
 * initial state (a T of all zero bytes).  Contents are private.
 */
#ifdef __cplusplus
/*
 * C++: loads and stores copy a T's bytes, which is defined only for
 * trivially copyable types.  A copy holds no T: a union with a T member
 * would have a deleted default constructor whenever T's is not trivial
 * (default member initialisers, a user-provided one).  alignas gives the
 * words T's alignment instead, so a copy has the size and alignment of
 * C's union.  latch_value_of_, never instantiated, names T for the checks
 * of the calls (a member class, unlike a typedef, keeps the struct
 * C-compatible, which "typedef LATCH_VALUE(T) name;" needs).
 */
#define LATCH_VALUE(T)                                                                             \
	struct {                                                                                   \
		static_assert(std::is_trivially_copyable<T>::value,                                \
		              "LATCH_VALUE(T): T must be trivially copyable, since loads and "     \
		              "stores copy its bytes while the writer may be storing them");       \
		struct latch_value_of_ {                                                           \
			T value;                                                                   \
		};                                                                                 \
		struct latch_seq seq;                                                              \
		struct {                                                                           \
			alignas(T) alignas(LATCH_VALUE_WORD)                                       \
			    LATCH_VALUE_WORD word[LATCH_VALUE_WORDS_(T)];                          \
		} copy[2];                                                                         \
	}
#else
#define LATCH_VALUE(T)                                                                             \
	struct {                                                                                   \
		struct latch_seq seq;                                                              \
		union {                                                                            \
			T value; /* gives the copy T's alignment and type; never accessed */       \
			LATCH_VALUE_WORD word[LATCH_VALUE_WORDS_(T)];                              \
		} copy[2];                                                                         \
	}
#endif

/* The word copies and the C++ argument checks the calls below expand to. */
#include <latch/detail/value.h>

/**
 * latch_value_store() - make *@src (a T) the value of @v (a LATCH_VALUE(T) *).
 *
 * Readers see the old value or the new one, never a mix.  Does not
 * compile unless *@src is a T (qualifiers aside).  Evaluates each
 * argument once.
 * Cost O(sizeof(T)): one copy written, the one readers are not on.
 * Never waits.  Writer only: stores to @v must be serialized by the
 * caller.
 */

/**
 * latch_value_load() - copy the value of @v (a LATCH_VALUE(T) *) to *@dst.
 *
 * Returns one whole stored value (or the all-zero initial one), never a
 * mix of two; right on its first attempt when it interrupted the writer.
 * Does not compile unless *@dst is a modifiable T.  Evaluates each
 * argument once.
 * Cost O(sizeof(T)) per attempt, never waits.  Any context, including
 * signal handlers; needs no serialization.
 *
 * Both are macros, defined below for C++ and for C.
 */

#ifdef __cplusplus

/* C++: function templates evaluate each argument once and check its type. */
#define latch_value_store(v, src) latch_value_store_cxx_((v), (src))
#define latch_value_load(v, dst)  latch_value_load_cxx_((v), (dst))

#else /* C */

/*
 * C: statement expressions (__extension__ keeps -Wpedantic quiet) evaluate
 * each argument once, into a local of its own type.  The checks only name
 * the arguments inside __typeof__, which does not evaluate them.
 * __builtin_types_compatible_p ignores qualifiers, so a const T * source
 * and a pointer to a const LATCH_VALUE(T) for loads are accepted.
 */
#define latch_value_store(v, src)                                                                  \
	__extension__({                                                                            \
		_Static_assert(__builtin_types_compatible_p(__typeof__(*(src)),                    \
		                                            __typeof__((v)->copy[0].value)),       \
		               "latch_value_store(v, src): src must point to a T, the type of "    \
		               "the LATCH_VALUE(T) that v points to");                             \
		__typeof__(&*(v)) latch_value_v_ = (v);                                            \
		const void *latch_value_src_ = (src);                                              \
		latch_value_store_(&latch_value_v_->seq, latch_value_v_->copy[0].word,             \
		                   latch_value_v_->copy[1].word, latch_value_src_,                 \
		                   sizeof(latch_value_v_->copy[0].value));                         \
	})

/* The assignment inside sizeof (not evaluated) fails to compile for a const *dst. */
#define latch_value_load(v, dst)                                                                   \
	__extension__({                                                                            \
		_Static_assert(__builtin_types_compatible_p(__typeof__(*(dst)),                    \
		                                            __typeof__((v)->copy[0].value)),       \
		               "latch_value_load(v, dst): dst must point to a T, the type of "     \
		               "the LATCH_VALUE(T) that v points to");                             \
		(void)sizeof(*(dst) = *(dst));                                                     \
		__typeof__(&*(v)) latch_value_v_ = (v);                                            \
		void *latch_value_dst_ = (dst);                                                    \
		latch_value_load_(&latch_value_v_->seq, latch_value_v_->copy[0].word,              \
		                  latch_value_v_->copy[1].word, latch_value_dst_,                  \
		                  sizeof(latch_value_v_->copy[0].value));                          \
	})

#endif /* __cplusplus */

#endif /* LATCH_VALUE_H */
