/* SPDX-License-Identifier: MIT */
/*
 * latch/detail/seq.h - the latch read loop as a statement, for the inline
 * readers of liblatch's structures.
 *
 * Not part of the API: nothing here may be called, named or relied on
 * directly; it changes without notice.  Include <latch/seq.h> and use
 * latch_seq_read().
 */
#ifndef LATCH_DETAIL_SEQ_H
#define LATCH_DETAIL_SEQ_H

/* Included by <latch/seq.h> once what it needs is declared, never on its own. */
#ifndef LATCH_SEQ_H
#error "include <latch/seq.h>, not <latch/detail/seq.h>"
#endif

/*
 * LATCH_SEQ_READ_(s, idx) statement - the read side of the latch protocol
 * around one attempt: runs the statement with @idx (an unsigned it
 * declares) naming the copy the counter @s sends readers to, and runs it
 * again until no flip happened meanwhile.  latch_seq_read_begin() and
 * latch_seq_read_retry() do the ordering (their comments say why it
 * suffices).  The last run's results stand, earlier ones are discarded:
 * the statement must only read the copy and write locals.  It must not
 * leave the loop (break, return, goto), which would skip the retry check;
 * continue ends the attempt.  Initialise the variables the statement
 * sets before it: the compiler drops the initial values, but GenMC
 * (tests/model) stops at the undefined ones it would see otherwise.
 * Never waits; right on the first attempt when it interrupted the writer.
 * Any context, including signal handlers.
 *
 * A statement rather than a callback (latch_seq_read() is this loop
 * around one): the attempt's calls keep their constant arguments, so a
 * structure's comparator inlines into its descent, where through a
 * callback's context struct gcc -O2 sees the comparator only after
 * inlining, too late to inline it.  Concurrency Kit's CK_SEQUENCE_READ is
 * the model.
 */
#define LATCH_SEQ_READ_(s, idx)                                                                    \
	for (unsigned latch_seq_start_ = 0, idx = 0, latch_seq_again_ = 1;                         \
	     latch_seq_again_ &&                                                                   \
	     (latch_seq_start_ = latch_seq_read_begin(s), idx = latch_seq_start_ & 1u, 1);         \
	     latch_seq_again_ = latch_seq_read_retry((s), latch_seq_start_))

#endif /* LATCH_DETAIL_SEQ_H */
