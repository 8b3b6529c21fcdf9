/* SPDX-License-Identifier: MIT */
/*
 * latch-sample: sample a process and name each sampled instruction
 * pointer by its published range map, in the kernel, at sample time.
 *
 *   latch-sample [-F HZ] [-d SECONDS] [-o FILE] [-w DONE,BUSY] PID NAME
 *
 * Opens one CPU-clock perf event per CPU (HZ samples a second, default
 * 1000), attaches latch-sample.bpf.c to each, and lets it resolve the
 * target's samples in range map NAME (found through latch_remote, the
 * descriptor handed to the program as read-only data).  Runs for SECONDS
 * (default 5) or until the target exits, then prints the counts.  -o
 * writes one struct latch_sample_record per sample to FILE; -w names two
 * words of the target (hexadecimal addresses) the program reads around
 * each lookup, for the tests.
 *
 * Exit status: 0; 1 on an error (a program the verifier rejects included:
 * LIBBPF_LOG=1 in the environment prints libbpf's messages); 77 when BPF
 * or perf events are not available here (not root, a kernel without
 * them), with one line saying why.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <latch/bpf/latch.bpf.h>
#include <latch/remote.h>

#include "latch-sample.h"
#include "latch-sample.skel.h"

#define EXIT_UNAVAILABLE 77

struct options {
	unsigned long hz;
	double seconds;
	const char *out;
	uint64_t done, busy;
	pid_t pid;
	const char *name;
};

static void usage(void)
{
	fprintf(stderr,
	        "usage: latch-sample [-F HZ] [-d SECONDS] [-o FILE] [-w DONE,BUSY] PID NAME\n");
	exit(1);
}

static void parse(int argc, char **argv, struct options *o)
{
	int opt;
	char *end;

	*o = (struct options){ .hz = 1000, .seconds = 5 };
	while ((opt = getopt(argc, argv, "F:d:o:w:")) != -1) {
		switch (opt) {
		case 'F':
			o->hz = strtoul(optarg, &end, 10);
			if (*end || !o->hz)
				usage();
			break;
		case 'd':
			o->seconds = strtod(optarg, &end);
			if (*end || !(o->seconds > 0))
				usage();
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'w':
			if (sscanf(optarg, "%" SCNx64 ",%" SCNx64, &o->done, &o->busy) != 2)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	o->pid = (pid_t)strtol(argv[optind], &end, 10);
	if (*end || o->pid <= 0)
		usage();
	o->name = argv[optind + 1];
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Does errno @err say that this kernel or these privileges do not allow
 * BPF programs (@events false) or CPU-clock perf events (true)?  Not a
 * verifier's rejection (EACCES, EINVAL, E2BIG on loading): that is a bug.
 */
static int unavailable(int err, int events)
{
	return err == EPERM || err == ENOSYS || err == EOPNOTSUPP ||
	       (events && (err == EACCES || err == ENOENT || err == ENODEV));
}

/* Say that @what failed with errno @err: a skip (one line) or an error; the exit status. */
static int skip_or_fail(const char *what, int err, int events)
{
	if (unavailable(err, events)) {
		printf("latch-sample: skipped: %s: %s\n", what, strerror(err));
		return EXIT_UNAVAILABLE;
	}
	fprintf(stderr, "latch-sample: %s: %s%s\n", what, strerror(err),
	        events ? "" : " (LIBBPF_LOG=1 prints the verifier's log)");
	return 1;
}

static int write_record(void *ctx, void *data, size_t size)
{
	FILE *f = ctx;

	return fwrite(data, size, 1, f) == 1 ? 0 : -EIO;
}

/* The target's map @name as the BPF reader takes it. */
static int describe(const struct options *o, struct latch_bpf_map *m)
{
	struct latch_layout_map d;
	struct latch_remote *r;
	int err = latch_remote_attach(o->pid, &r);

	if (err) {
		fprintf(stderr, "latch-sample: cannot attach to %d: %s\n", (int)o->pid,
		        strerror(-err));
		return 1;
	}
	err = latch_remote_describe(r, o->name, &d);
	latch_remote_detach(r);
	if (err != 1) {
		fprintf(stderr, "latch-sample: no published map %s in %d: %s\n", o->name,
		        (int)o->pid, strerror(-err));
		return 1;
	}
	if (latch_bpf_map_from_layout(&d, m)) {
		fprintf(stderr, "latch-sample: %s: not a range map of a 64-bit process\n", o->name);
		return 1;
	}
	return 0;
}

/* The sum over CPUs of each counter. */
static void read_counters(struct latch_sample *skel, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *per = calloc((size_t)ncpu, sizeof(*per));

	for (uint32_t k = 0; k < LATCH_SAMPLE_COUNTERS; k++) {
		sum[k] = 0;
		if (per && bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &k, per) == 0)
			for (int c = 0; c < ncpu; c++)
				sum[k] += per[c];
	}
	free(per);
}

/* Open and attach one CPU-clock event per online CPU; 0, or an errno. */
static int attach_events(struct latch_sample *skel, unsigned long hz, struct bpf_link ***links,
                         int *nlinks)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
		                        .size = sizeof(attr),
		                        .config = PERF_COUNT_SW_CPU_CLOCK,
		                        .freq = 1,
		                        .sample_freq = hz };

	*links = calloc((size_t)ncpu, sizeof(**links));
	if (!*links)
		return ENOMEM;
	for (long cpu = 0; cpu < ncpu; cpu++) {
		/* Every task on the CPU: the program keeps the target's samples. */
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1,
		                      PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* a CPU gone offline meanwhile */
			return errno;
		}
		(*links)[*nlinks] = bpf_program__attach_perf_event(skel->progs.latch_sample, fd);
		if (!(*links)[*nlinks]) {
			int err = errno;

			close(fd);
			return err;
		}
		(*nlinks)++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[LATCH_SAMPLE_COUNTERS] = {
		"samples", "kernel-mode", "found", "not-found", "unreadable", "invalid",
		"gave-up", "retries",     "busy",  "dropped",   "lookup-ns"
	};
	struct options o;
	struct latch_bpf_map m;
	struct latch_sample *skel;
	struct ring_buffer *rb = NULL;
	struct bpf_link **links = NULL;
	FILE *out = NULL;
	uint64_t sum[LATCH_SAMPLE_COUNTERS];
	double until;
	int nlinks = 0, err, status = 0;

	parse(argc, argv, &o);
	if (describe(&o, &m))
		return 1;
	if (!getenv("LIBBPF_LOG"))
		libbpf_set_print(NULL);
	skel = latch_sample__open();
	if (!skel) {
		fprintf(stderr, "latch-sample: cannot open the BPF program: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->target_tgid = (__u32)o.pid;
	skel->bss->target_map = m;
	skel->rodata->watch_done = o.done;
	skel->rodata->watch_busy = o.busy;
	skel->rodata->want_records = o.out != NULL;
	err = latch_sample__load(skel);
	if (err) {
		latch_sample__destroy(skel);
		return skip_or_fail("the kernel does not load the BPF program", -err, 0);
	}
	err = attach_events(skel, o.hz, &links, &nlinks);
	if (err) {
		status = skip_or_fail("cannot sample with perf events", err, 1);
		goto done;
	}
	if (o.out) {
		out = fopen(o.out, "wb");
		if (!out) {
			fprintf(stderr, "latch-sample: %s: %s\n", o.out, strerror(errno));
			status = 1;
			goto done;
		}
		rb = ring_buffer__new(bpf_map__fd(skel->maps.records), write_record, out, NULL);
		if (!rb) {
			fprintf(stderr, "latch-sample: ring buffer: %s\n", strerror(errno));
			status = 1;
			goto done;
		}
	}
	until = now_s() + o.seconds;
	while (now_s() < until && kill(o.pid, 0) == 0) {
		if (rb)
			ring_buffer__poll(rb, 100);
		else
			usleep(100000);
	}
	if (rb)
		ring_buffer__consume(rb);
	read_counters(skel, sum);
	for (int k = 0; k < LATCH_SAMPLE_COUNTERS; k++)
		printf("%s %" PRIu64 "\n", names[k], sum[k]);
	if (sum[LATCH_SAMPLE_SAMPLES])
		printf("ns-per-lookup %.0f\n",
		       (double)sum[LATCH_SAMPLE_NS] / (double)sum[LATCH_SAMPLE_SAMPLES]);
done:
	ring_buffer__free(rb);
	if (out && fclose(out)) {
		fprintf(stderr, "latch-sample: %s: %s\n", o.out, strerror(errno));
		status = 1;
	}
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(links);
	latch_sample__destroy(skel);
	return status;
}
