/* SPDX-License-Identifier: MIT */
/*
 * signal-tls-probe NAME: exit 0 when threads keep their thread-local
 * storage across signal handlers; otherwise print why NAME is skipped
 * and exit 77 (see ../support/signal-tls.h).  CTest runs it before programs that
 * signal threads but are not tests themselves (the examples symbolize and
 * latch-demo), through unless-signals-lose-tls.sh.
 */
#define _GNU_SOURCE
#include "signal-tls.h"

int main(int argc, char **argv)
{
	test_skip_if_signals_lose_tls(argc > 1 ? argv[1] : "signal-tls-probe");
	return 0;
}
