/* SPDX-License-Identifier: MIT */
/*
 * latchbench's results: every measured figure, one value per run, printed
 * as tables (median and spread), as the list of target ratios, and as CSV.
 */
#ifndef LATCH_BENCH_REPORT_H
#define LATCH_BENCH_REPORT_H

#include <stdio.h>

#include "bench.h"

#define REPORT_MAX_RUNS 15

/* Record one run's @value of @metric for @peer in cell (@workload, @size, @what). */
void report_add(int workload, long size, const char *what, const char *peer, const char *metric,
                double value);

/* The machine, the peers built and the ones missing (one line each). */
void report_header(FILE *out);

/* One table per workload and metric: cells down, peers across. */
void report_print(FILE *out);

/* Every target ratio of docs/benchmarks.md, as median [min, max] over runs, with its verdict. */
void report_targets(FILE *out);

/* Every figure as CSV; 0 or -1 with errno set. */
int report_csv(const char *path);

#endif /* LATCH_BENCH_REPORT_H */
