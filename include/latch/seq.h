/* SPDX-License-Identifier: MIT */
/*
 * latch/seq.h - the latch sequence counter.
 *
 * A latch keeps two copies of a structure and one counter.  The counter's
 * low bit tells readers which copy is stable right now:
 *
 *	writer                             count    readers use
 *	latch_seq_write_begin()            odd      copy 1 (copy 0 is changed)
 *	latch_seq_write_switch()           even     copy 0 (copy 1 is changed)
 *	latch_seq_write_end()              even     copy 0
 *
 * A reader never waits: whatever instruction the writer is stopped at, one
 * copy is untouched, so a reader that interrupted the writer on the same
 * thread (a signal handler) still completes.  A reader retries only when
 * the writer flipped the counter while it was reading, which cannot happen
 * while the writer is interrupted.
 *
 * Synchronization: the write side must be serialized by the caller (one
 * writer at a time); the read side may run anywhere, any number at once,
 * including in signal handlers.
 */
#ifndef LATCH_SEQ_H
#define LATCH_SEQ_H

#include <assert.h>
#include <stdbool.h>

#include <latch/atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A latch sequence counter; all-zero (LATCH_SEQ_INIT) is the initial state. */
struct latch_seq {
	unsigned sequence; /* accessed only through LATCH_LOAD_* / LATCH_STORE_* */
};

/** Static initialiser for struct latch_seq. */
#define LATCH_SEQ_INIT                                                                             \
	{                                                                                          \
		0                                                                                  \
	}

/**
 * latch_seq_init() - set a counter to its initial (even) state.
 * Cost O(1).  Must not race with any reader or writer of @s.
 */
static inline void latch_seq_init(struct latch_seq *s)
{
	/* Relaxed: initialisation happens before the counter is shared. */
	LATCH_STORE_RELAXED(&s->sequence, 0u);
}

/* Advance the counter by one: the single step both flips are made of. */
static inline void latch_seq_flip_(struct latch_seq *s)
{
	/* Relaxed load: only the (serialized) writer stores the counter. */
	unsigned next = LATCH_LOAD_RELAXED(&s->sequence) + 1u;

	/*
	 * Release store: every change the writer made to the copy readers are
	 * being sent to happens-before a reader's acquire load that sees
	 * @next, so a reader of that copy sees it complete.
	 */
	LATCH_STORE_RELEASE(&s->sequence, next);
	/*
	 * Release fence: the store above is ordered before every store the
	 * writer makes next (to the copy readers just left).  A reader that
	 * observes any of those stores and then runs the acquire fence in
	 * latch_seq_read_retry() is guaranteed to see @next and retry.
	 */
	LATCH_FENCE_RELEASE();
}

/**
 * latch_seq_write_begin() - start an update: send readers to copy 1.
 *
 * After it returns, copy 0 may be modified.  Cost O(1), no waiting.
 * Writer only; calls must be serialized by the caller.
 */
static inline void latch_seq_write_begin(struct latch_seq *s)
{
	assert((LATCH_LOAD_RELAXED(&s->sequence) & 1u) == 0 &&
	       "latch_seq_write_begin: an update is already in progress");
	latch_seq_flip_(s);
}

/**
 * latch_seq_write_switch() - copy 0 is done: send readers back to copy 0.
 *
 * After it returns, copy 1 may be modified (to match copy 0).  Cost O(1).
 * Writer only; calls must be serialized by the caller.
 */
static inline void latch_seq_write_switch(struct latch_seq *s)
{
	assert((LATCH_LOAD_RELAXED(&s->sequence) & 1u) == 1 &&
	       "latch_seq_write_switch: called without latch_seq_write_begin");
	latch_seq_flip_(s);
}

/**
 * latch_seq_write_end() - mark the end of an update.
 *
 * The counter does not change here (it changes exactly twice per update,
 * at begin and at switch); this call documents the end of the writer's
 * critical section and, in debug builds, checks the protocol.
 * Writer only; calls must be serialized by the caller.
 */
static inline void latch_seq_write_end(struct latch_seq *s)
{
	assert((LATCH_LOAD_RELAXED(&s->sequence) & 1u) == 0 &&
	       "latch_seq_write_end: called without latch_seq_write_switch");
	(void)s;
}

/**
 * latch_seq_read_begin() - start a read section.
 *
 * Returns the start count; read copy (start & 1), then call
 * latch_seq_read_retry().  Cost O(1), never waits.
 * Any context, including signal handlers; no serialization needed.
 */
static inline unsigned latch_seq_read_begin(const struct latch_seq *s)
{
	/*
	 * Acquire load: pairs with the release store in latch_seq_flip_(), so
	 * every change made to copy (start & 1) before that flip is visible.
	 */
	return LATCH_LOAD_ACQUIRE(&s->sequence);
}

/**
 * latch_seq_read_retry() - did the copy read since @start possibly change?
 *
 * Returns true when the data read must be discarded and read again.
 * Cost O(1), never waits.  Any context, including signal handlers.
 */
static inline bool latch_seq_read_retry(const struct latch_seq *s, unsigned start)
{
	/*
	 * Acquire fence: orders every load of the read section before the
	 * load of the counter below.  If any of those loads saw a store the
	 * writer made after a flip (and its release fence), this fence
	 * synchronizes with that release fence, so the load below sees the
	 * flip and the read is discarded.
	 */
	LATCH_FENCE_ACQUIRE();
	/* Relaxed: the fence above provides all the ordering this load needs. */
	return LATCH_LOAD_RELAXED(&s->sequence) != start;
}

#ifdef __cplusplus
}
#endif

#endif /* LATCH_SEQ_H */
