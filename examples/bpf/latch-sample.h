/* SPDX-License-Identifier: MIT */
/*
 * What the sampler's BPF program (latch-sample.bpf.c) and its loader
 * (latch-sample.c) share: the per-sample record and the counters.
 */
#ifndef LATCH_SAMPLE_H
#define LATCH_SAMPLE_H

#include <linux/types.h>

/* One user-mode sample of the target, resolved at sample time. */
struct latch_sample_record {
	__u64 ip;                      /* the sampled instruction pointer */
	__u64 start, end, value;       /* the range found (result LATCH_BPF_FOUND) */
	__u64 done_before, done_after; /* the watched count word, before and after (0: none) */
	__u64 ns;                      /* the lookup's time, in ns */
	__u32 seq_first, seq_last;     /* the map's counter, first and last loads */
	__u32 attempts;                /* walks made */
	__u32 tid;                     /* the sampled thread */
	__u32 busy;                    /* the watched busy word (0: none) */
	__s32 result;                  /* enum latch_bpf_result */
};

/* The per-CPU counters. */
enum latch_sample_counter {
	LATCH_SAMPLE_SAMPLES, /* samples of the target, user mode */
	LATCH_SAMPLE_KERNEL,  /* samples of the target in kernel mode (not resolved) */
	/* One per enum latch_bpf_result, in the order FOUND, NONE, UNREADABLE, INVALID, GAVE_UP. */
	LATCH_SAMPLE_FOUND,      /* resolved to a range */
	LATCH_SAMPLE_NONE,       /* no range holds the IP */
	LATCH_SAMPLE_UNREADABLE, /* bpf_probe_read_user() failed */
	LATCH_SAMPLE_INVALID,    /* not a valid map */
	LATCH_SAMPLE_GAVE_UP,    /* the counter changed on every attempt */
	LATCH_SAMPLE_RETRIES,    /* walks made again after a flip */
	LATCH_SAMPLE_BUSY,       /* samples while the busy word was set */
	LATCH_SAMPLE_DROPPED,    /* records the ring buffer had no room for */
	LATCH_SAMPLE_NS,         /* total lookup time, ns */
	LATCH_SAMPLE_COUNTERS
};

#endif /* LATCH_SAMPLE_H */
