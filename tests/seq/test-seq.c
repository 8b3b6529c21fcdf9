/* SPDX-License-Identifier: MIT */
/*
 * The latch sequence counter's protocol: which copy the writer changes
 * first and which one readers are sent to at each step, when a read must
 * retry, what latch_seq_write() and latch_seq_read() call, and that
 * wrap-around of the counter (which comes soonest with 32-bit counters)
 * changes none of it.
 */
#include <limits.h>

#include <latch/seq.h>

#include "check.h"

/* What latch_seq_write()'s callback saw, and the count at each call. */
struct write_log {
	struct latch_seq *s;
	unsigned calls, idx[2], count[2];
	bool replay[2];
};

static void log_change(void *ctx, unsigned idx, bool replay)
{
	struct write_log *log = ctx;

	if (log->calls < 2) {
		log->idx[log->calls] = idx;
		log->replay[log->calls] = replay;
		log->count[log->calls] = latch_seq_read_begin(log->s);
	}
	log->calls++;
}

/* latch_seq_read()'s callback: counts attempts, flips the counter on the first. */
struct read_log {
	struct latch_seq *s;
	unsigned attempts, idx[2];
	bool flip_on_first;
};

static void log_attempt(void *ctx, unsigned idx)
{
	struct read_log *log = ctx;

	if (log->attempts < 2)
		log->idx[log->attempts] = idx;
	if (log->attempts++ == 0 && log->flip_on_first)
		(void)latch_seq_write_flip(log->s); /* an update completing meanwhile */
}

static void check_update_from(unsigned initial)
{
	struct latch_seq s = { initial };
	unsigned before = latch_seq_read_begin(&s), first, other, after;
	struct write_log wlog = { &s, 0, { 0, 0 }, { 0, 0 }, { true, true } };
	struct read_log rlog = { &s, 0, { 9, 9 }, true };

	CHECK(!latch_seq_read_retry(&s, before), "no retry without a flip (count %u)", before);

	first = latch_seq_write_begin(&s);
	CHECK(first == ((before & 1) ^ 1), "begin names the copy readers are not on (%u, count %u)",
	      first, before);
	CHECK(latch_seq_read_begin(&s) == before && !latch_seq_read_retry(&s, before),
	      "begin does not move the count (count %u)", before);

	other = latch_seq_write_flip(&s);
	after = latch_seq_read_begin(&s);
	CHECK(after == before + 1u, "one flip moves the count by one (%u -> %u)", before, after);
	CHECK((after & 1) == first, "after the flip readers use the copy changed first (count %u)",
	      after);
	CHECK(other == (before & 1), "flip returns the copy readers just left (%u, count %u)",
	      other, before);
	CHECK(latch_seq_read_retry(&s, before), "a read spanning the flip must retry (count %u)",
	      before);
	CHECK(!latch_seq_read_retry(&s, after), "a read started after the flip stands (count %u)",
	      after);

	/* The structured form: the idle copy first, the flip, then the other copy. */
	latch_seq_write(&s, log_change, &wlog);
	CHECK(wlog.calls == 2, "latch_seq_write() called its change %u times", wlog.calls);
	CHECK(wlog.idx[0] == ((after & 1) ^ 1) && !wlog.replay[0] && wlog.count[0] == after,
	      "the first change is to the idle copy, before the flip (copy %u, count %u)",
	      wlog.idx[0], wlog.count[0]);
	CHECK(wlog.idx[1] == (after & 1) && wlog.replay[1] && wlog.count[1] == after + 1u,
	      "the replay is to the copy readers left, after the flip (copy %u, count %u)",
	      wlog.idx[1], wlog.count[1]);

	/* The read loop: a flip during the first attempt makes it try again on the new copy. */
	after = latch_seq_read_begin(&s);
	latch_seq_read(&s, log_attempt, &rlog);
	CHECK(rlog.attempts == 2, "a read overlapping a flip made %u attempts, not 2",
	      rlog.attempts);
	CHECK(rlog.idx[0] == (after & 1) && rlog.idx[1] == ((after + 1u) & 1),
	      "the attempts read copies %u then %u (count %u)", rlog.idx[0], rlog.idx[1], after);
	rlog = (struct read_log){ &s, 0, { 9, 9 }, false };
	latch_seq_read(&s, log_attempt, &rlog);
	CHECK(rlog.attempts == 1, "a read without a flip made %u attempts", rlog.attempts);
}

int main(void)
{
	struct latch_seq s = LATCH_SEQ_INIT;
	unsigned start;

	latch_seq_init(&s);
	CHECK(latch_seq_read_begin(&s) == 0, "init gives count 0");
	CHECK(latch_seq_write_begin(&s) == 1, "the first update changes copy 1 first");

	check_update_from(0);
	check_update_from(1);
	check_update_from(1000);
	/* Wrap-around: the count passes UINT_MAX -> 0 at the first flip ... */
	check_update_from(UINT_MAX);
	/* ... inside latch_seq_write() ... */
	check_update_from(UINT_MAX - 1);
	/* ... and in the read loop. */
	check_update_from(UINT_MAX - 2);

	/* A reader that started long before must retry even across the wrap. */
	s.sequence = UINT_MAX - 2;
	start = latch_seq_read_begin(&s);
	for (int i = 0; i < 5; i++) {
		unsigned first = latch_seq_write_begin(&s), other = latch_seq_write_flip(&s);

		CHECK(first != other, "update %d: begin and flip named the same copy %u", i + 1,
		      first);
		CHECK(latch_seq_read_retry(&s, start), "retry after %d updates across the wrap",
		      i + 1);
	}
	puts("test-seq: protocol and wrap-around checks passed");
	return 0;
}
