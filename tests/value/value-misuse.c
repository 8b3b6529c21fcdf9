/* SPDX-License-Identifier: MIT */
/*
 * Calls of the latched value that must not compile, each selected by
 * -DMISUSE=N, and, without MISUSE, the right calls beside them, which must
 * compile warning-free.  Compiled as C11 and as C++17 (and, for some
 * cases, C++11 and C++20) by compile-fails.sh; it is never linked or run.
 */
#include <latch/value.h>

struct pair {
	long a, b;
};
struct other_pair { /* the size of struct pair, another type */
	long c, d;
};

#ifdef __cplusplus
/* Trivially copyable, with a default member initialiser and a constructor. */
struct with_init {
	long base = 7;
};
struct with_ctor {
	with_ctor() : mult(3)
	{
	}
	long mult;
};
/* Not trivially copyable: its copies could not be made of bytes. */
struct not_trivial {
	not_trivial(const not_trivial &other) : x(other.x + 1)
	{
	}
	long x;
};
#endif

typedef LATCH_VALUE(long) latched_long;
static latched_long num;
static LATCH_VALUE(struct pair) pairs;

void value_misuse(void);

void value_misuse(void)
{
	long l = 1;
	const long cl = 2;
	struct pair p = { 1, 2 };
	const latched_long *cnum = &num;

	latch_value_store(&num, &l);
	latch_value_store(&num, &cl); /* a const source is fine */
	latch_value_load(&num, &l);
	latch_value_load(cnum, &l); /* loads need only a const value */
	latch_value_store(&pairs, &p);
	latch_value_load(&pairs, &p);
#ifdef __cplusplus
	static LATCH_VALUE(with_init) inits;
	static LATCH_VALUE(with_ctor) ctors;
	with_init wi;
	with_ctor wc;

	latch_value_store(&inits, &wi);
	latch_value_load(&inits, &wi);
	latch_value_store(&ctors, &wc);
	latch_value_load(&ctors, &wc);
#endif

#if MISUSE == 1 /* a load into a smaller type would overflow it */
	int i;
	latch_value_load(&num, &i);
#elif MISUSE == 2 /* a store from a smaller type would over-read it */
	int i = 0;
	latch_value_store(&num, &i);
#elif MISUSE == 3 /* the same size, another type */
	struct other_pair o = { 3, 4 };
	latch_value_store(&pairs, &o);
#elif MISUSE == 4 /* the same size, another type */
	unsigned long u;
	latch_value_load(&num, &u);
#elif MISUSE == 5 /* a load into a const object */
	latch_value_load(&num, &cl);
#elif MISUSE == 6 && defined(__cplusplus)
	static LATCH_VALUE(not_trivial) bad;
	(void)bad;
#endif
}
