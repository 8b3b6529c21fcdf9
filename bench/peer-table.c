/* SPDX-License-Identifier: MIT */
/* The peers this build of latchbench has; optional ones are detected by CMake. */
#include "bench.h"

extern const struct bench_peer bench_peer_plain, bench_peer_seqlock, bench_peer_rwlock,
    bench_peer_mutex, bench_peer_tsearch, bench_peer_urcu_lfht, bench_peer_ck_hs,
    bench_peer_sorted_latch, bench_peer_latch_2flip, bench_range_peer_latch,
    bench_range_peer_sorted_latch, bench_range_peer_rwlock, bench_peer_latch_map,
    bench_peer_branchless, bench_range_peer_branchless, bench_peer_absl_flat, bench_peer_absl_btree,
    bench_range_peer_deref, bench_range_peer_payload16, bench_range_peer_payload64;

/* plain first: it is the baseline of the lookup and write ratios. */
const struct bench_peer *const bench_peers[] = {
	&bench_peer_plain,        &bench_peer_latch,      &bench_peer_latch_2flip,
	&bench_peer_seqlock,      &bench_peer_rwlock,     &bench_peer_mutex,
	&bench_peer_tsearch,
#ifdef LATCH_BENCH_HAVE_URCU
	&bench_peer_urcu_lfht,
#endif
#ifdef LATCH_BENCH_HAVE_CK
	&bench_peer_ck_hs,
#endif
#ifdef LATCH_BENCH_HAVE_ABSL
	&bench_peer_absl_flat,    &bench_peer_absl_btree,
#endif
	&bench_peer_sorted_latch, &bench_peer_latch_map,  &bench_peer_branchless,
};
const size_t bench_peer_count = sizeof(bench_peers) / sizeof(bench_peers[0]);

const struct bench_peer *const bench_range_peers[] = {
	&bench_range_peer_latch,      &bench_range_peer_deref,        &bench_range_peer_payload16,
	&bench_range_peer_payload64,  &bench_range_peer_sorted_latch, &bench_range_peer_rwlock,
	&bench_range_peer_branchless,
};
const size_t bench_range_peer_count = sizeof(bench_range_peers) / sizeof(bench_range_peers[0]);

const char *const bench_missing[] = {
#ifndef LATCH_BENCH_HAVE_URCU
	"urcu-lfht: not built: liburcu not found (apt-get install liburcu-dev)",
#endif
#ifndef LATCH_BENCH_HAVE_CK
	"ck-hs: not built: Concurrency Kit not found (apt-get install libck-dev)",
#endif
#ifndef LATCH_BENCH_HAVE_ABSL
	"absl-flat, absl-btree: not built: abseil not found (apt-get install libabsl-dev)",
#endif
#ifndef LATCH_BENCH_HAVE_DLFO
	"_dl_find_object: not built: the C library has no _dl_find_object() (glibc < 2.35)",
#endif
#ifndef LATCH_BENCH_HAVE_MALLINFO2
	"workload 6 skipped: the C library has no mallinfo2() (glibc < 2.33)",
#endif
	NULL,
};
