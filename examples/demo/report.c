/* SPDX-License-Identifier: MIT */
/*
 * What the demo prints: the header, the progress line, the table with a
 * verdict under each row, the closing paragraph and the result.  Colour
 * only when stdout is a terminal (and NO_COLOR is unset).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "demo.h"

enum paint { PLAIN, BOLD, DIM, GREEN, RED, YELLOW };

static const char *const sgr[] = { "", "\033[1m", "\033[2m", "\033[32m", "\033[31m", "\033[33m" };

/* Print @text in @paint when colour is on. */
static void put(const struct demo_options *opt, enum paint paint, const char *text)
{
	if (opt->colour && paint != PLAIN)
		printf("%s%s\033[0m", sgr[paint], text);
	else
		fputs(text, stdout);
}

/* Terminal columns @text takes: one per UTF-8 code point. */
static size_t columns_of(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += ((unsigned char)*text & 0xc0u) != 0x80u;
	return n;
}

/* @text padded to @width columns, right-aligned when @right. */
static void put_cell(const struct demo_options *opt, enum paint paint, const char *text,
                     size_t width, bool right)
{
	size_t pad = width - columns_of(text);

	if (right)
		printf("%*s", (int)pad, "");
	put(opt, paint, text);
	if (!right)
		printf("%*s", (int)pad, "");
}

/* @v with thousands separators: 1,234,567. */
static const char *grouped(unsigned long long v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%llu", v), out = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
	return buf;
}

/* @ns in the unit that reads best: 850 ns, 1.2 µs, 12 µs, 3.4 ms, 340 ms, 1.2 s. */
static const char *duration(unsigned long long ns, char buf[32])
{
	if (ns < 1000)
		snprintf(buf, 32, "%llu ns", ns);
	else if (ns < 10000)
		snprintf(buf, 32, "%.1f µs", (double)ns / 1e3);
	else if (ns < 1000000)
		snprintf(buf, 32, "%.0f µs", (double)ns / 1e3);
	else if (ns < 10000000)
		snprintf(buf, 32, "%.1f ms", (double)ns / 1e6);
	else if (ns < 1000000000)
		snprintf(buf, 32, "%.0f ms", (double)ns / 1e6);
	else
		snprintf(buf, 32, "%.1f s", (double)ns / 1e9);
	return buf;
}

/* The terminal's columns, or 80 when stdout is not a terminal. */
static size_t terminal_width(const struct demo_options *opt)
{
	struct winsize ws;

	if (opt->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	return 80;
}

/* Columns for wrapped text: the terminal's, at most 80. */
static size_t text_width(const struct demo_options *opt)
{
	size_t width = terminal_width(opt);

	return (width < 80 ? width : 80) - 1;
}

/* @text word-wrapped to @width columns, every line indented by @indent. */
static void put_paragraph(const char *text, size_t indent, size_t width)
{
	size_t col = 0;

	while (*text) {
		size_t word = strcspn(text, " ");

		if (col && col + 1 + word > width) {
			putchar('\n');
			col = 0;
		}
		if (col == 0)
			col = (size_t)printf("%*s", (int)indent, "");
		else
			col += (size_t)printf(" ");
		col += (size_t)printf("%.*s", (int)word, text);
		text += word;
		text += strspn(text, " ");
	}
	putchar('\n');
}

void demo_report_header(const struct demo_options *opt)
{
	char text[768];

	putchar('\n');
	put(opt, BOLD, "latch-demo: a sampling profiler over a JIT-like program\n\n");
	snprintf(text, sizeof(text),
	         "A writer thread registers and unregisters generated-code regions "
	         "(%u that stay, %u that come and go, one at a time and in atomic batches). "
	         "It and %u worker thread%s each take SIGPROF %u times a second from "
	         "their own profiling timer; the handler resolves the address its thread "
	         "was using and checks the region it gets. Each map gets %.1f\xc2\xa0s in its own "
	         "process; a lookup stuck for %.0f\xc2\xa0s counts as hung.",
	         DEMO_STABLE_REGIONS, DEMO_CHURN_REGIONS, opt->threads,
	         opt->threads == 1 ? "" : "s", opt->rate, opt->seconds, DEMO_HANG_NS / 1e9);
	put_paragraph(text, 2, text_width(opt));
	putchar('\n');
	fflush(stdout);
}

void demo_progress(const struct demo_options *opt, const struct demo_outcome *now, double elapsed)
{
	static const char *const spin[] = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" };
	char line[256], a[32], b[32], c[32];
	size_t room = terminal_width(opt) - 5, len;

	if (!opt->tty)
		return;
	len = (size_t)snprintf(line, sizeof(line), "%-18s %.1f/%.1f s  samples %s  ",
	                       now->map->label, elapsed, opt->seconds, grouped(now->samples, a));
	if (now->stuck_ns >= DEMO_HANG_NS / 10)
		snprintf(line + len, sizeof(line) - len, "a lookup has waited %s",
		         duration(now->stuck_ns, b));
	else
		snprintf(line + len, sizeof(line) - len, "interrupted %s  wrong %s",
		         grouped(now->interrupted, b), grouped(now->wrong, c));
	/* One line only, or the next \r would not return to its start. */
	if (columns_of(line) > room)
		line[room] = '\0';
	printf("\r\033[K  ");
	put(opt, YELLOW, spin[(unsigned)(elapsed * 10) % 10]);
	printf(" ");
	put(opt, now->stuck_ns >= DEMO_HANG_NS / 10 ? YELLOW : PLAIN, line);
	fflush(stdout);
}

void demo_progress_end(const struct demo_options *opt)
{
	if (opt->tty) {
		printf("\r\033[K");
		fflush(stdout);
	}
}

enum judgement { PASSED, BROKE, UNCLEAR };

static const char *plural(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

/* The verdict on @o into @buf; sets o->as_expected. */
static enum judgement judge(struct demo_outcome *o, char *buf, size_t size)
{
	enum demo_expect expect = o->map->expect;
	char n[32];

	o->as_expected = false;
	switch (o->end) {
	case DEMO_END_HUNG:
		if (o->stuck_on_writer && o->stuck_in_update) {
			o->as_expected = expect != DEMO_EXPECT_PASS;
			int len =
			    snprintf(buf, size, "%s: a signal handler interrupted the writer",
			             expect == DEMO_EXPECT_HANG_OR_FAIL ? "deadlocked" : "hung");

			if (o->refused)
				snprintf(buf + len, size - (size_t)len, ", after %s refusal%s",
				         grouped(o->refused, n), plural(o->refused));
		} else {
			snprintf(buf, size, "hung: a lookup waited %s", duration(o->stuck_ns, n));
		}
		return BROKE;
	case DEMO_END_OVERRAN:
		snprintf(buf, size, "did not exit in time after its run");
		return BROKE;
	case DEMO_END_CRASHED:
		snprintf(buf, size, "crashed: %s", strsignal(o->status));
		return BROKE;
	case DEMO_END_ERROR:
		snprintf(buf, size, "could not run (exit status %d)", o->status);
		return BROKE;
	case DEMO_END_FINISHED:
		break;
	}
	if (o->refused) {
		o->as_expected = expect == DEMO_EXPECT_HANG_OR_FAIL;
		snprintf(buf, size,
		         "failed: the lock refused %s lookup%s that interrupted the writer",
		         grouped(o->refused, n), plural(o->refused));
		return BROKE;
	}
	if (o->wrong) {
		snprintf(buf, size, "failed: %s wrong answer%s", grouped(o->wrong, n),
		         plural(o->wrong));
		return BROKE;
	}
	if (!o->interrupted) {
		snprintf(buf, size,
		         "inconclusive: no sample interrupted an update "
		         "(raise --rate or --seconds)");
		return UNCLEAR;
	}
	if (expect == DEMO_EXPECT_PASS) {
		o->as_expected = true;
		snprintf(buf, size, "passed: every lookup finished and was right");
		return PASSED;
	}
	snprintf(buf, size, "did not %s within the run, though %s samples interrupted an update",
	         expect == DEMO_EXPECT_HANG ? "hang" : "fail", grouped(o->interrupted, n));
	return UNCLEAR;
}

#define NCOLS 6

/* The table's cells for @o, with the column widths widened to fit. */
static void row_cells(const struct demo_outcome *o, char cells[NCOLS][32], size_t width[NCOLS])
{
	snprintf(cells[0], 32, "%s", o->map->label);
	grouped(o->updates, cells[1]);
	grouped(o->samples, cells[2]);
	grouped(o->interrupted, cells[3]);
	grouped(o->wrong, cells[4]);
	if (o->end == DEMO_END_HUNG)
		snprintf(cells[5], 32, "stuck");
	else if (o->samples == 0)
		snprintf(cells[5], 32, "-");
	else
		duration(o->worst_ns, cells[5]);
	for (int c = 0; c < NCOLS; c++) {
		if (columns_of(cells[c]) > width[c])
			width[c] = columns_of(cells[c]);
	}
}

static void put_rule(const struct demo_options *opt, const size_t width[NCOLS])
{
	printf("  ");
	for (int c = 0; c < NCOLS; c++) {
		char line[3 * 64 + 1] = "";

		for (size_t i = 0; i < width[c] && i < 64; i++)
			strcat(line, "─");
		put(opt, DIM, line);
		printf(c + 1 < NCOLS ? "  " : "\n");
	}
}

/* One line of the table: the first cell left-aligned, the numbers right-aligned. */
static void put_row(const struct demo_options *opt, const char *const cells[NCOLS],
                    const size_t width[NCOLS], enum paint first, enum paint rest)
{
	printf("  ");
	for (int c = 0; c < NCOLS; c++) {
		put_cell(opt, c == 0 ? first : rest, cells[c], width[c], c > 0);
		printf(c + 1 < NCOLS ? "  " : "\n");
	}
}

bool demo_report_table(const struct demo_options *opt, struct demo_outcome *outs, size_t n)
{
	static const char *const head[2][NCOLS] = {
		{ "", "writer", "samples", "interrupted", "wrong", "worst" },
		{ "map", "updates", "taken", "an update", "answers", "lookup" },
	};
	static const enum paint mark_paint[] = { GREEN, RED, YELLOW };
	static const char *const mark[] = { "✔", "✘", "?" };
	char cells[DEMO_NMAPS][NCOLS][32], verdict[DEMO_NMAPS][160], text[1536];
	enum judgement j[DEMO_NMAPS];
	size_t width[NCOLS] = { 0 };
	bool all_as_expected = true;

	for (int c = 0; c < NCOLS; c++)
		width[c] = columns_of(head[0][c]) > columns_of(head[1][c]) ? columns_of(head[0][c])
		                                                           : columns_of(head[1][c]);
	for (size_t i = 0; i < n; i++) {
		row_cells(&outs[i], cells[i], width);
		j[i] = judge(&outs[i], verdict[i], sizeof(verdict[i]));
		all_as_expected = all_as_expected && outs[i].as_expected;
	}

	put_row(opt, head[0], width, BOLD, BOLD);
	put_row(opt, head[1], width, BOLD, BOLD);
	put_rule(opt, width);
	for (size_t i = 0; i < n; i++) {
		const char *row[NCOLS];

		for (int c = 0; c < NCOLS; c++)
			row[c] = cells[i][c];
		put_row(opt, row, width, BOLD, PLAIN);
		printf("    ");
		put(opt, mark_paint[j[i]], mark[j[i]]);
		printf(" ");
		put(opt, mark_paint[j[i]], verdict[i]);
		printf("\n");
	}
	putchar('\n');

	snprintf(text, sizeof(text),
	         "Every sample is a lookup made inside the SIGPROF handler; \"interrupted an "
	         "update\" counts those that landed on the writer thread while it was changing "
	         "the map.");
	for (size_t i = 0; i < n; i++) {
		strcat(text, " ");
		strcat(text, outs[i].map->lesson);
	}
	put_paragraph(text, 2, text_width(opt));
	putchar('\n');
	put(opt, all_as_expected ? GREEN : RED,
	    all_as_expected ? "  Result: as expected.\n"
	                    : "  Result: not as expected (see the verdicts).\n");
	return all_as_expected;
}
