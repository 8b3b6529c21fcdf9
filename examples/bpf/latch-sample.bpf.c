/* SPDX-License-Identifier: MIT */
/*
 * The sampler's BPF program: on each CPU-clock sample of the target
 * process in user mode, the range of its published map that holds the
 * instruction pointer, found at sample time with latch_bpf_range_find().
 * Counts per CPU; with records on, one record per sample in a ring buffer.
 * The loader (latch-sample.c) sets the read-only globals before loading.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include <latch/bpf/latch.bpf.h>

#include "latch-sample.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 target_tgid;
const volatile __u64 watch_done; /* address of an 8-byte count word in the target, or 0 */
const volatile __u64 watch_busy; /* address of a 4-byte busy word in the target, or 0 */
const volatile __u32 want_records;
/* Writable data, not read-only: the compiler would take a const struct's zeros for its value. */
struct latch_bpf_map target_map;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct latch_bpf_node);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LATCH_SAMPLE_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} records SEC(".maps");

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += n; /* per CPU, and a program does not nest on its CPU */
}

/* The @size-byte word (4 or 8) at @addr in the target, or 0. */
static __always_inline __u64 read_word(__u64 addr, __u32 size)
{
	__u64 w = 0;

	if (addr)
		bpf_probe_read_user(&w, size, (const void *)addr);
	return w;
}

SEC("perf_event")
int latch_sample(struct bpf_perf_event_data *ctx)
{
	struct latch_sample_record rec = {};
	struct latch_bpf_trace trace = {};
	struct latch_bpf_range range = {};
	struct latch_bpf_node *node;
	__u64 id = bpf_get_current_pid_tgid(), t0;
	__u32 zero = 0;

	if (id >> 32 != target_tgid)
		return 0;
	rec.ip = PT_REGS_IP(&ctx->regs);
	/* Kernel addresses have the top bit set (x86-64): not the target's code. */
	if (rec.ip >> 63) {
		count(LATCH_SAMPLE_KERNEL, 1);
		return 0;
	}
	node = bpf_map_lookup_elem(&scratch, &zero);
	if (!node)
		return 0;
	rec.tid = (__u32)id;
	t0 = bpf_ktime_get_ns();
	/* The watched words frame the lookup: x86-64 keeps the loads in order. */
	rec.done_before = read_word(watch_done, 8);
	rec.busy = (__u32)read_word(watch_busy, 4);
	rec.result = latch_bpf_range_find(&target_map, rec.ip, node, &range, &trace);
	rec.done_after = read_word(watch_done, 8);
	rec.ns = bpf_ktime_get_ns() - t0;
	rec.start = range.start;
	rec.end = range.end;
	rec.value = range.value;
	rec.seq_first = trace.seq_first;
	rec.seq_last = trace.seq_last;
	rec.attempts = trace.attempts;
	count(LATCH_SAMPLE_SAMPLES, 1);
	count(LATCH_SAMPLE_NS, rec.ns);
	if (rec.attempts > 1)
		count(LATCH_SAMPLE_RETRIES, rec.attempts - 1);
	if (rec.busy)
		count(LATCH_SAMPLE_BUSY, 1);
	/* The counters of the five results follow one another, LATCH_BPF_FOUND's first. */
	count(LATCH_SAMPLE_FOUND + (__u32)(LATCH_BPF_FOUND - rec.result), 1);
	if (want_records && bpf_ringbuf_output(&records, &rec, sizeof(rec), 0))
		count(LATCH_SAMPLE_DROPPED, 1);
	return 0;
}
