/* SPDX-License-Identifier: MIT */
/* latchbench's results: storage, tables, target ratios and CSV. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

struct figure {
	int workload;
	long size;
	char what[32], peer[24], metric[24];
	double v[REPORT_MAX_RUNS];
	int n;
};

static struct figure *figures;
static size_t nfigures, cap;

static struct figure *figure_find(int workload, long size, const char *what, const char *peer,
                                  const char *metric)
{
	for (size_t i = 0; i < nfigures; i++) {
		struct figure *f = &figures[i];

		if (f->workload == workload && f->size == size && !strcmp(f->what, what) &&
		    !strcmp(f->peer, peer) && !strcmp(f->metric, metric))
			return f;
	}
	return NULL;
}

void report_add(int workload, long size, const char *what, const char *peer, const char *metric,
                double value)
{
	struct figure *f = figure_find(workload, size, what, peer, metric);

	if (!f) {
		if (nfigures == cap) {
			cap = cap ? 2 * cap : 256;
			figures = realloc(figures, cap * sizeof(*figures));
			if (!figures) {
				perror("latchbench");
				exit(1);
			}
		}
		f = &figures[nfigures++];
		memset(f, 0, sizeof(*f));
		f->workload = workload;
		f->size = size;
		snprintf(f->what, sizeof(f->what), "%s", what);
		snprintf(f->peer, sizeof(f->peer), "%s", peer);
		snprintf(f->metric, sizeof(f->metric), "%s", metric);
	}
	if (f->n < REPORT_MAX_RUNS)
		f->v[f->n++] = value;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median, min and max of v[0..n-1] (n >= 1). */
static void summarize(const double *v, int n, double *median, double *min, double *max)
{
	double s[REPORT_MAX_RUNS];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	*median = n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	*min = s[0];
	*max = s[n - 1];
}

void report_header(FILE *out)
{
	struct utsname u;
	char model[128] = "unknown CPU", line[256];
	FILE *cpu = fopen("/proc/cpuinfo", "r");

	while (cpu && fgets(line, sizeof(line), cpu))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (cpu)
		fclose(cpu);
	uname(&u);
	fprintf(out, "latchbench: %s, %ld CPUs, %s %s, " __VERSION__ "\npeers:", model,
	        sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release);
	for (size_t i = 0; i < bench_peer_count; i++)
		fprintf(out, " %s", bench_peers[i]->name);
	fputc('\n', out);
	for (const char *const *m = bench_missing; *m; m++)
		fprintf(out, "%s\n", *m);
}

static const char *const workload_titles[] = {
	"",
	"1. Lookup cost, one thread (ns per lookup)",
	"2. Read-mostly concurrency: one writer (insert+erase pairs), readers on other cores",
	"3. Write cost, one thread (ns per insert+erase pair)",
	"4. Address ranges (ns per operation)",
	"5. Batches: one commit of 1, 8 or 64 changes, a reader on the other core",
	"6. Memory (heap bytes per element, element included)",
	"7. Latched value: latch_value_store() (one flip) against a two-flip store (ns per store)",
	"8. Ordered lookups: the greatest key <= k, k between the keys (ns per lookup)",
	"9. Bulk load: n inserts in random order against one load of the sorted keys",
};

/* Adds @name to @list (of *n, at most @max) unless present. */
static void add_unique(const char **list, size_t *n, size_t max, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(list[i], name))
			return;
	if (*n < max)
		list[(*n)++] = name;
}

static void print_table(FILE *out, int workload, const char *metric)
{
	const char *peers[32], *rows[64];
	long row_size[64];
	size_t np = 0, nr = 0;

	for (size_t i = 0; i < nfigures; i++) {
		const struct figure *f = &figures[i];
		size_t r;

		if (f->workload != workload || strcmp(f->metric, metric))
			continue;
		add_unique(peers, &np, 32, f->peer);
		for (r = 0; r < nr && !(row_size[r] == f->size && !strcmp(rows[r], f->what)); r++)
			;
		if (r == nr && nr < 64) {
			rows[nr] = f->what;
			row_size[nr++] = f->size;
		}
	}
	fprintf(out, "\n  [%s; median of runs, spread = (max-min)/median]\n  %9s %-14s", metric,
	        "n", "case");
	for (size_t p = 0; p < np; p++)
		fprintf(out, " %15s", peers[p]);
	fputc('\n', out);
	for (size_t r = 0; r < nr; r++) {
		fprintf(out, "  %9ld %-14s", row_size[r], rows[r]);
		for (size_t p = 0; p < np; p++) {
			const struct figure *f =
			    figure_find(workload, row_size[r], rows[r], peers[p], metric);
			double med, min, max;

			if (!f) {
				fprintf(out, " %15s", "-");
				continue;
			}
			summarize(f->v, f->n, &med, &min, &max);
			fprintf(out, " %9.4g %4.0f%%", med, med ? 100 * (max - min) / med : 0);
		}
		fputc('\n', out);
	}
}

void report_print(FILE *out)
{
	for (int w = 1; w < (int)(sizeof(workload_titles) / sizeof(workload_titles[0])); w++) {
		const char *metrics[8];
		size_t nm = 0;

		for (size_t i = 0; i < nfigures; i++)
			if (figures[i].workload == w)
				add_unique(metrics, &nm, 8, figures[i].metric);
		if (!nm)
			continue;
		fprintf(out, "\n%s\n", workload_titles[w]);
		for (size_t m = 0; m < nm; m++)
			print_table(out, w, metrics[m]);
	}
}

/*
 * A target: ratio a/b of @metric between (what_a, peer_a) and
 * (what_b, peer_b), at every size where both were measured, taken run by
 * run; op is '>' (ratio must be >= bound), '<' (<= bound) or 0 (report).
 * what_a and what_b NULL: the same ratio for every case measured; peer_b
 * NULL: the figure of (what_a, peer_a) itself, against an absolute bound.
 */
struct target {
	int workload;
	const char *metric, *what_a, *peer_a, *what_b, *peer_b;
	char op;
	double bound;
	long min_size; /* the verdict applies from this n up; below, the ratio is reported */
	const char *meaning;
	/*
	 * Unless 0: above this n the line is left to the next target, of the
	 * same meaning, which in turn leaves the sizes up to it to this one.
	 */
	long max_size;
};

static const struct target targets[] = {
	{ 1, "ns/lookup", NULL, "plain", NULL, "latch", '>', 0.95, 10000,
	  "lookup speed latch/plain (plain ns / latch ns)", 0 },
	{ 2, "lookups/s", "writer max", "latch", "writer max", "rwlock", '>', 3, 0,
	  "reader lookups/s latch/rwlock, unthrottled writer", 0 },
	{ 2, "lookups/s", "writer max", "latch", "writer max", "tsearch", '>', 3, 0,
	  "reader lookups/s latch/tsearch, unthrottled writer", 0 },
	{ 2, "lookups/s", "writer max", "latch", "writer max", "seqlock", '>', 1.0, 0,
	  "reader lookups/s latch/seqlock, unthrottled writer", 0 },
	{ 2, "lookups/s", "writer 1e3/s", "latch", "writer 0/s", "latch", '>', 0.95, 0,
	  "reader lookups/s latch, writer 1e3/s vs read-only", 0 },
	{ 3, "ns/pair", "insert+erase", "latch", "insert+erase", "plain", '<', 2.2, 0,
	  "write cost latch/plain (ns per pair)", 0 },
	{ 4, "ns/op", "find", "latch", "find", "sorted-latch", '<', 0.8, 1000,
	  "range find cost latch/sorted-latch (ns)", 1000 },
	{ 4, "ns/op", "find", "latch", "find", "sorted-latch", '<', 1.0, 100000,
	  "range find cost latch/sorted-latch (ns)", 0 },
	{ 4, "ns/range", "build by inserts", "latch", "build by load_sorted", "latch", '>', 10,
	  100000, "range build speed load_sorted/inserts (ns ratio)", 0 },
	{ 4, "ns/op", "insert+erase", "sorted-latch", "insert+erase", "latch", '>', 100, 100000,
	  "range update speed latch/sorted-latch (ns ratio)", 0 },
	{ 4, "ns/op", "find", "latch-payload16", "find", "latch-deref", 0, 0, 0,
	  "range find cost 16-byte payload copied/value read (ns)", 0 },
	{ 4, "ns/op", "find", "latch-payload16", "find", "latch", 0, 0, 0,
	  "range find cost 16-byte payload copied/value (ns)", 0 },
	{ 4, "ns/op", "find", "latch-payload64", "find", "latch", 0, 0, 0,
	  "range find cost 64-byte payload copied/value (ns)", 0 },
	{ 4, "ns/op", "insert+erase", "latch-payload16", "insert+erase", "latch", 0, 0, 0,
	  "range write cost 16-byte payload/value (ns)", 0 },
	{ 4, "ns/op", "insert+erase", "latch-payload64", "insert+erase", "latch", 0, 0, 0,
	  "range write cost 64-byte payload/value (ns)", 0 },
	{ 4, "ns/op", "loaded objects", "latch", "loaded objects", "_dl_find_object", 0, 0, 0,
	  "latch_range_find cost vs glibc _dl_find_object (ns)", 0 },
	{ 1, "ns/lookup", "uniform hit", "urcu-lfht", "uniform hit", "latch", 0, 0, 0,
	  "lookup speed latch/urcu-lfht (hash, no order)", 0 },
	{ 1, "ns/lookup", "uniform hit", "ck-hs", "uniform hit", "latch", 0, 0, 0,
	  "lookup speed latch/ck-hs (hash, no order)", 0 },
	{ 2, "lookups/s", "writer max", "latch", "writer max", "urcu-lfht", 0, 0, 0,
	  "reader lookups/s latch/urcu-lfht, unthrottled writer", 0 },
	{ 2, "lookups/s", "writer max", "latch", "writer max", "ck-hs", 0, 0, 0,
	  "reader lookups/s latch/ck-hs, unthrottled writer", 0 },
	{ 2, "retries/lookup", "writer max", "latch-2flip", "writer max", "latch", 0, 0, 0,
	  "reader retries two flips/one flip, unthrottled writer", 0 },
	{ 2, "lookups/s", "writer max", "latch", "writer max", "latch-2flip", 0, 0, 0,
	  "reader lookups/s one flip/two flips, unthrottled writer", 0 },
	{ 3, "ns/pair", "insert+erase", "latch-2flip", "insert+erase", "latch", 0, 0, 0,
	  "write cost two flips/one flip (ns per pair)", 0 },
	{ 7, "ns/store", "store", "two flips", "store", "one flip", 0, 0, 0,
	  "latch_value_store cost two flips/one flip (ns)", 0 },
	{ 1, "ns/lookup", "uniform hit", "latch", "uniform hit", "latch-map", '>', 2, 10000,
	  "lookup speed latch-map/latch (latch ns / map ns)", 10000 },
	{ 1, "ns/lookup", "uniform hit", "latch", "uniform hit", "latch-map", '>', 3, 1000000,
	  "lookup speed latch-map/latch (latch ns / map ns)", 0 },
	{ 1, "ns/lookup", "uniform hit", "sorted-latch", "uniform hit", "latch-map", '>', 1.0,
	  10000, "lookup speed latch-map/sorted-latch", 0 },
	{ 1, "ns/lookup", "uniform hit", "ck-hs", "uniform hit", "latch-map", '>', 0.9, 1000000,
	  "lookup speed latch-map/ck-hs (hash ns / map ns)", 0 },
	{ 1, "ns/lookup", "uniform hit", "urcu-lfht", "uniform hit", "latch-map", '>', 0.9, 1000000,
	  "lookup speed latch-map/urcu-lfht (hash ns / map ns)", 0 },
	/* Lookups against the fastest tables (workload 1's random keys and walks). */
	{ 1, "ns/lookup", "random hit", "latch-map", "random hit", "absl-flat", '<', 3, 10000,
	  "lookup cost latch-map/absl-flat (map ns / hash ns)", 10000 },
	{ 1, "ns/lookup", "random hit", "latch-map", "random hit", "absl-flat", 0, 0, 1000000,
	  "lookup cost latch-map/absl-flat (map ns / hash ns)", 0 },
	{ 1, "ns/lookup", "random hit x64", "latch-map", "random hit", "absl-flat", '<', 2, 10000,
	  "find_many x64 cost latch-map/absl-flat (per key)", 10000 },
	{ 1, "ns/lookup", "random hit x64", "latch-map", "random hit", "absl-flat", '<', 1.5,
	  1000000, "find_many x64 cost latch-map/absl-flat (per key)", 0 },
	{ 1, "ns/lookup", "random hit", "latch-map", "random hit x64", "latch-map", '>', 3, 1000000,
	  "find_many x64 speed latch-map: find ns / find_many ns", 0 },
	{ 1, "ns/lookup", "random chain", "latch-map", "random chain", "absl-flat", '<', 1, 1000000,
	  "latency latch-map/absl-flat (chained ns)", 0 },
	{ 4, "ns/op", "find", "latch", "find x64", "latch", '>', 3, 100000,
	  "range find_many x64 speed: find ns / find_many ns", 0 },
	{ 8, "ns/lookup", "floor", "latch", "floor", "latch-map", '>', 3, 1000000,
	  "floor speed latch-map/latch (latch ns / map ns)", 0 },
	{ 3, "ns/pair", "insert+erase", "latch-map", "insert+erase", "latch", '<', 2.0, 10000,
	  "write cost latch-map/latch (ns per pair)", 10000 },
	{ 3, "ns/pair", "insert+erase", "latch-map", "insert+erase", "latch", '<', 1.5, 1000000,
	  "write cost latch-map/latch (ns per pair)", 0 },
	{ 2, "lookups/s", "writer max", "latch-map", "writer max", "latch", '>', 2, 0,
	  "reader lookups/s latch-map/latch, unthrottled writer", 0 },
	{ 5, "ns/element", NULL, "latch-map", NULL, "latch", 0, 0, 0,
	  "batch cost latch-map/latch (ns per element)", 0 },
	{ 9, "ns/element", "inserts", "latch-map", "load_sorted", "latch-map", '>', 10, 1000000,
	  "bulk load speed latch-map: inserts ns / load_sorted ns", 0 },
	/*
	 * The map's bounds are on its nodes (50 and 36 bytes per entry); the
	 * heap figures also hold the driver's 8-byte key per slot, hence + 8.
	 */
	{ 6, "bytes/elem", "heap", "latch-map", NULL, NULL, '<', 50 + 8, 1000000,
	  "memory latch-map after random inserts (bytes/elem, +8 keys)", 0 },
	{ 9, "bytes/elem", "load_sorted", "latch-map", NULL, NULL, '<', 36 + 8, 1000000,
	  "memory latch-map after load_sorted (bytes/elem, +8 keys)", 0 },
};

/* Prints @t's line for cell (@size, @what), if both sides were measured. */
static void print_target(FILE *out, const struct target *t, long size, const char *what)
{
	const struct figure *a =
	    figure_find(t->workload, size, t->what_a ? t->what_a : what, t->peer_a, t->metric);
	const struct figure *b =
	    t->peer_b
	        ? figure_find(t->workload, size, t->what_b ? t->what_b : what, t->peer_b, t->metric)
	        : NULL;
	double r[REPORT_MAX_RUNS], med, min, max;
	int n;

	if (!a || (t->peer_b && !b) || (t->max_size && size > t->max_size) ||
	    (!t->max_size && t->min_size && t != targets && t[-1].max_size &&
	     !strcmp(t[-1].meaning, t->meaning) && size <= t[-1].max_size))
		return;
	n = b && b->n < a->n ? b->n : a->n;
	for (int i = 0; i < n; i++)
		r[i] = b ? a->v[i] / b->v[i] : a->v[i];
	summarize(r, n, &med, &min, &max);
	fprintf(out, "  %-54s %-13s %8ld %8.3f [%.3f, %.3f]  ", t->meaning, what, size, med, min,
	        max);
	if (!t->op || size < t->min_size)
		fputs("(reported)\n", out);
	else
		fprintf(out, "%s %g: %s\n", t->op == '>' ? ">=" : "<=", t->bound,
		        (t->op == '>' ? med >= t->bound : med <= t->bound) ? "met" : "MISSED");
}

void report_targets(FILE *out)
{
	fprintf(out,
	        "\nTargets (ratio per run, median [min, max] over runs)\n  %-54s %-13s %8s %8s\n",
	        "ratio", "case", "n", "median");
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
		for (size_t i = 0; i < nfigures; i++) {
			const struct figure *f = &figures[i];

			if (f->workload == targets[t].workload &&
			    !strcmp(f->peer, targets[t].peer_a) &&
			    !strcmp(f->metric, targets[t].metric) &&
			    (!targets[t].what_a || !strcmp(f->what, targets[t].what_a)))
				print_target(out, &targets[t], f->size, f->what);
		}
}

int report_csv(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("workload,n,case,peer,metric,median,min,max,runs\n", f);
	for (size_t i = 0; i < nfigures; i++) {
		const struct figure *g = &figures[i];
		double med, min, max;

		summarize(g->v, g->n, &med, &min, &max);
		fprintf(f, "%d,%ld,%s,%s,%s,%.6g,%.6g,%.6g,%d\n", g->workload, g->size, g->what,
		        g->peer, g->metric, med, min, max, g->n);
	}
	if (fclose(f) != 0)
		return -1;
	return 0;
}
