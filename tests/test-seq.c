/* SPDX-License-Identifier: MIT */
/*
 * The latch sequence counter's protocol: which copy readers are sent to at
 * each step, when a read must retry, and that wrap-around of the counter
 * (which comes soonest with 32-bit counters) changes neither.
 */
#include <limits.h>

#include <latch/seq.h>

#include "check.h"

static void check_update_from(unsigned initial)
{
	struct latch_seq s = { initial };
	unsigned before = latch_seq_read_begin(&s);
	unsigned during_copy0_change, during_copy1_change;

	CHECK((before & 1) == 0, "a quiescent counter sends readers to copy 0 (count %u)", before);
	CHECK(!latch_seq_read_retry(&s, before), "no retry without a flip");

	latch_seq_write_begin(&s);
	during_copy0_change = latch_seq_read_begin(&s);
	CHECK((during_copy0_change & 1) == 1, "after begin readers use copy 1 (count %u)",
	      during_copy0_change);
	CHECK(latch_seq_read_retry(&s, before), "a read spanning begin must retry");

	latch_seq_write_switch(&s);
	during_copy1_change = latch_seq_read_begin(&s);
	CHECK((during_copy1_change & 1) == 0, "after switch readers use copy 0 (count %u)",
	      during_copy1_change);
	CHECK(latch_seq_read_retry(&s, during_copy0_change), "a read spanning switch must retry");

	latch_seq_write_end(&s);
	CHECK(!latch_seq_read_retry(&s, during_copy1_change), "end does not change the count");
	CHECK(s.sequence - initial == 2u, "one update moves the count by exactly 2 (moved %u)",
	      s.sequence - initial);
}

int main(void)
{
	struct latch_seq s = LATCH_SEQ_INIT;
	unsigned start;

	latch_seq_init(&s);
	CHECK(latch_seq_read_begin(&s) == 0, "init gives count 0");

	check_update_from(0);
	check_update_from(1000);
	/* Wrap-around: the count passes UINT_MAX -> 0 between begin and switch. */
	check_update_from(UINT_MAX - 1);
	/* ... and between switch and the next update. */
	check_update_from(UINT_MAX - 3);

	/* A reader that started long before must retry even across the wrap. */
	s.sequence = UINT_MAX - 1;
	start = latch_seq_read_begin(&s);
	for (int i = 0; i < 5; i++) {
		latch_seq_write_begin(&s);
		latch_seq_write_switch(&s);
		latch_seq_write_end(&s);
		CHECK(latch_seq_read_retry(&s, start), "retry after %d updates across the wrap",
		      i + 1);
	}
	puts("test-seq: protocol and wrap-around checks passed");
	return 0;
}
