#!/bin/sh
# SPDX-License-Identifier: MIT
# tsan-test.sh CMAKE BUILD_DIR SOURCE_DIR LIBDIR CC CFLAGS
#
# Installs the build in BUILD_DIR (built without sanitizers) into a
# temporary prefix, builds tsan-consumer.c with -fsanitize=thread against
# the installed headers, once linked to liblatch.so and once to
# liblatch.a, and runs both: ThreadSanitizer must report nothing (it
# stops at the first report and exits non-zero).  The consumer is built
# with -Werror: the headers must compile warning-free under
# -fsanitize=thread (gcc 12 and later warn at every fence, -Wtsan).
# Skipped (exit 77), with the reason, when CC cannot build and run a
# ThreadSanitizer program.
set -eu
cmake=$1 build=$2 src=$3 libdir=$4 cc=$5 cflags=$6

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
work="$prefix/work"
mkdir "$work"

printf 'int main(void) { return 0; }\n' >"$work/probe.c"
# shellcheck disable=SC2086 # cflags are words
if ! "$cc" $cflags -fsanitize=thread "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1 ||
	! "$work/probe" >>"$work/probe.log" 2>&1; then
	echo "skipped: $cc $cflags cannot build and run a -fsanitize=thread program:"
	cat "$work/probe.log"
	exit 77
fi

"$cmake" --install "$build" --prefix "$prefix" >"$prefix/install.log" || {
	cat "$prefix/install.log" >&2
	exit 1
}

export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
for how in shared static; do
	if [ "$how" = shared ]; then
		libs="-L$prefix/$libdir -Wl,-rpath,$prefix/$libdir -llatch"
	else
		libs="$prefix/$libdir/liblatch.a"
	fi
	# shellcheck disable=SC2086 # cflags and libs are words
	"$cc" $cflags -std=c11 -Wall -Wextra -Werror -g -O1 -fsanitize=thread -I"$prefix/include" \
		"$src/tsan-consumer.c" -o "$work/tsan-consumer-$how" $libs -pthread
	status=0
	"$work/tsan-consumer-$how" >"$work/run.log" 2>&1 || status=$?
	cat "$work/run.log"
	if [ "$status" != 0 ] || grep -q "ThreadSanitizer" "$work/run.log"; then
		echo "FAIL: ThreadSanitizer reported on the consumer linked to liblatch ($how), exit $status" >&2
		exit 1
	fi
	echo "tsan-test: consumer linked to the installed liblatch ($how): no report"
done
