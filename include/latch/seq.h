/* SPDX-License-Identifier: MIT */
/*
 * latch/seq.h - the latch sequence counter.
 *
 * A latch keeps two copies of a structure and one counter.  The counter's
 * low bit names the copy readers use; the writer changes the other one,
 * the idle copy, and then flips the counter once:
 *
 *	writer                          count   readers use
 *	idx = latch_seq_write_begin()   c       copy c & 1 (idx = the other)
 *	  ... change copy idx ...
 *	other = latch_seq_write_flip()  c + 1   copy idx   (other = c & 1)
 *	  ... bring copy other up to date ...
 *
 * latch_seq_update() is the whole protocol in one call (latch_seq_write()
 * the same for an update that cannot fail).  A reader never
 * waits: whatever instruction the writer is stopped at, the copy the
 * counter names is complete (the old contents before the flip, the new
 * ones after it), so a reader that interrupted the writer on the same
 * thread (a signal handler) completes on its first attempt.  A reader
 * retries only when the writer flipped the counter while it was reading,
 * which cannot happen while the writer is interrupted: one flip per
 * update, so at most one retry per update.
 *
 * The Linux kernel's latch flips twice per update (raw_write_seqcount_latch()
 * before each copy).  Code ported from it maps each pair of those calls
 * onto latch_seq_write_begin() (which flips nothing) and
 * latch_seq_write_flip(), with the copies taken from their return values
 * instead of the constants 0 and 1.
 *
 * Synchronization: the write side must be serialized by the caller (one
 * writer at a time); the read side may run anywhere, any number at once,
 * including in signal handlers.
 *
 * The reference for each call (cost, contexts, what to serialize, errors)
 * is its man page: latch_seq(3).
 */
#ifndef LATCH_SEQ_H
#define LATCH_SEQ_H

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

/**
 * latch_seq_write_begin() - the copy an update changes first.
 *
 * Returns (count & 1) ^ 1, the idle copy, which no reader that starts now
 * is sent to; change it, then call latch_seq_write_flip().  Changes
 * nothing.  There is no "update in progress" state to check: between
 * updates and in the middle of one the counter looks the same, so misuse
 * (a second begin, a missing flip) cannot be detected from it, and
 * latch_seq_update() is the form that cannot get the protocol wrong.
 * Cost O(1), no waiting.  Writer only; calls must be serialized by the
 * caller.
 */
static inline unsigned latch_seq_write_begin(const struct latch_seq *s)
{
	/*
	 * Relaxed: only the (serialized) writer stores the counter, so it
	 * reads its own last store.  Readers that started on the idle copy
	 * before the last flip are still safe: the release fence of that
	 * flip (below) is ordered before every change made now, so a reader
	 * that sees one of them sees that flip in latch_seq_read_retry().
	 */
	return (LATCH_LOAD_RELAXED(&s->sequence) & 1u) ^ 1u;
}

/**
 * latch_seq_write_flip() - publish the copy just changed.
 *
 * Sends every reader that starts from now on to the copy
 * latch_seq_write_begin() returned, and makes every reader still on the
 * other copy retry once it finishes.  Returns that other copy (the one
 * readers just left), which the update must then bring up to date: it
 * may be changed from now until the next flip.  Cost O(1): one release
 * store and one release fence.  Writer only; calls must be serialized by
 * the caller.
 */
static inline unsigned latch_seq_write_flip(struct latch_seq *s)
{
	/* Relaxed load: only the (serialized) writer stores the counter. */
	unsigned next = LATCH_LOAD_RELAXED(&s->sequence) + 1u;

	/*
	 * Release store: every change the writer made to the copy it now
	 * publishes (copy next & 1, changed since the previous flip)
	 * happens-before the loads of a reader whose acquire load in
	 * latch_seq_read_begin() reads @next, so such a reader sees that
	 * copy complete.
	 */
	LATCH_STORE_RELEASE(&s->sequence, next);
	/*
	 * Release fence: orders the store above before every store the
	 * writer makes next, to the copy readers just left (the replay now,
	 * and the first half of the next update after it).  A reader on that
	 * copy that loads any of those stores and then runs the acquire fence
	 * in latch_seq_read_retry() synchronizes with this fence, so its
	 * reload of the counter sees @next (or later) and it retries.  A
	 * release store alone would not do: it orders earlier accesses
	 * before it, not itself before later ones.
	 */
	LATCH_FENCE_RELEASE();
	return (next & 1u) ^ 1u;
}

/**
 * latch_seq_update() - one whole update that may fail: change the idle
 * copy, and only if that succeeded flip and replay onto the other copy.
 *
 * Calls @change(@ctx, idx, false) on the copy latch_seq_write_begin()
 * names.  If it returns nonzero, it must have left that copy as it found
 * it: nothing is flipped, readers never saw the attempt, and the value is
 * returned.  Otherwise latch_seq_write_flip() sends readers to that copy
 * and @change(@ctx, other, true) replays the update on the copy they
 * left; the replay must succeed (its value is ignored) and leave both
 * copies equal.  The @replay argument lets the second call reuse work of
 * the first (a tree's descent, a check already made).  Readers see the
 * update from the flip on.  This is the one place liblatch's structures
 * make the protocol's steps.
 *
 * ThreadSanitizer, when the process runs it, is told that everything the
 * writer did before the flip happens-before what a reader does after its
 * LATCH_TSAN_ACQUIRE_(@s) (latch/detail/atomic.h): a library built
 * without it makes the flip's release store where ThreadSanitizer cannot
 * see it.
 *
 * Returns 0 or @change's error.  Cost O(1) plus the two calls.  Writer
 * only; calls must be serialized by the caller.
 */
static inline int latch_seq_update(struct latch_seq *s,
                                   int (*change)(void *ctx, unsigned idx, bool replay), void *ctx)
{
	int err = change(ctx, latch_seq_write_begin(s), false);

	if (err)
		return err;
	latch_tsan_release_(s);
	(void)change(ctx, latch_seq_write_flip(s), true);
	return 0;
}

/* latch_seq_write()'s change and context, as latch_seq_update() calls them. */
struct latch_seq_write_ {
	void (*change)(void *ctx, unsigned idx, bool replay);
	void *ctx;
};

static inline int latch_seq_write_change_(void *arg, unsigned idx, bool replay)
{
	const struct latch_seq_write_ *w = (const struct latch_seq_write_ *)arg;

	w->change(w->ctx, idx, replay);
	return 0;
}

/**
 * latch_seq_write() - one whole update that cannot fail.
 *
 * latch_seq_update() with a @change that returns nothing: @change(@ctx,
 * idx, false) on the idle copy, the flip, @change(@ctx, other, true) on
 * the copy readers just left.  Cost O(1) plus the two calls.  Writer
 * only; calls must be serialized by the caller.
 */
static inline void latch_seq_write(struct latch_seq *s,
                                   void (*change)(void *ctx, unsigned idx, bool replay), void *ctx)
{
	struct latch_seq_write_ w = { change, ctx };

	(void)latch_seq_update(s, latch_seq_write_change_, &w);
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
	 * Acquire load: pairs with the release store in latch_seq_write_flip()
	 * that wrote the value read, so every change made to copy (start & 1)
	 * before that flip is visible.
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
	 * load of the counter below.  The writer changes copy (start & 1)
	 * only after the next flip (it is the copy that flip leaves, the one
	 * latch_seq_write_begin() then names): if any of those loads saw such
	 * a change, this fence synchronizes with that flip's release fence,
	 * so the load below sees the flip and the read is discarded.
	 */
	LATCH_FENCE_ACQUIRE();
	/* Relaxed: the fence above provides all the ordering this load needs. */
	return LATCH_LOAD_RELAXED(&s->sequence) != start;
}

/* The read loop as a statement, which latch_seq_read() and the structures' readers share. */
#include <latch/detail/seq.h>

/**
 * latch_seq_read() - the whole read loop.
 *
 * Calls @attempt(@ctx, idx) on copy idx = start & 1 and repeats it until
 * no flip happened meanwhile; the last call's results stand, earlier ones
 * must be discarded (so @attempt must only read the copy and write @ctx).
 * Never waits; right on the first attempt when it interrupted the writer.
 * Cost O(1) plus the attempts.  Any context, including signal handlers;
 * no serialization needed.  Inline, so a constant @attempt inlines.
 */
static inline void latch_seq_read(const struct latch_seq *s,
                                  void (*attempt)(void *ctx, unsigned idx), void *ctx)
{
	LATCH_SEQ_READ_(s, idx) attempt(ctx, idx);
}

#ifdef __cplusplus
}
#endif

#endif /* LATCH_SEQ_H */
