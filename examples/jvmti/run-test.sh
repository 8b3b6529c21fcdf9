#!/bin/sh
# SPDX-License-Identifier: MIT
# run-test.sh JAVA JAVAC AGENT WORKLOAD_JAVA CLASS_DIR
#
# The test example-jvmti: runs JAVA with the agent on the workload for
# LATCH_JVMTI_SECONDS (default 12) under a watchdog and passes when
# HotSpot unloaded compiled code (unloads > 0), samples landed in compiled
# code (in_jit > 0) and the check found no wrong answer.  Exit 77 when
# there is no java.  JAVA and JAVAC fall back to those on the PATH.
set -u
java=$1 javac=$2 agent=$3 source=$4 classes=$5
seconds=${LATCH_JVMTI_SECONDS:-12}

[ -x "$java" ] || java=$(command -v java) || {
	echo "example-jvmti: skipped: no java (install openjdk-17-jdk-headless)"
	exit 77
}
if [ ! -f "$classes/Workload.class" ] || [ "$source" -nt "$classes/Workload.class" ]; then
	[ -x "$javac" ] || javac=$(command -v javac) || {
		echo "example-jvmti: skipped: the workload is not compiled and there is no javac"
		exit 77
	}
	"$javac" -d "$classes" "$source" || exit 1
fi

# Class unloading comes from the workload's System.gc() calls (the default
# collector unloads classes at a full collection); the small code cache
# makes HotSpot reuse the space of unloaded code sooner.
flags="-Xmx256m -XX:ReservedCodeCacheSize=32m -XX:+ClassUnloading"
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
echo "example-jvmti: $java $flags -agentpath:$agent -cp $classes Workload $seconds"
status=0
# The watchdog: a JVM that hangs (a lookup that waited, a deadlock in the
# agent) is killed, and the test fails, well before CTest's own timeout
# (which is all there is without coreutils' timeout).
watchdog=
command -v timeout >/dev/null && watchdog="timeout -k 10 $((seconds + 90))"
$watchdog "$java" $flags "-agentpath:$agent" -cp "$classes" Workload "$seconds" >"$out" 2>&1 ||
	status=$?
cat "$out"
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
	echo "example-jvmti: FAIL: the JVM did not finish (hung?)"
	exit 1
fi
if [ "$status" != 0 ]; then
	echo "example-jvmti: FAIL: the JVM exited with status $status"
	exit 1
fi

# The summary line's key=value figures.
figure() {
	sed -n "s/^jvmti-agent: loads=.* $1=\([0-9]*\).*/\1/p" "$out"
}
unloads=$(figure unloads)
in_jit=$(figure in_jit)
check=$(grep '^jvmti-agent: check: ' "$out")
fail=
[ -n "$unloads" ] && [ "$unloads" -gt 0 ] || fail="$fail; no compiled code was unloaded"
[ -n "$in_jit" ] && [ "$in_jit" -gt 0 ] || fail="$fail; no sample landed in compiled code"
case $check in
*" answers, 0 wrong") ;;
*) fail="$fail; the check found wrong answers (or did not run)" ;;
esac
if [ -n "$fail" ]; then
	echo "example-jvmti: FAIL:${fail#;}"
	exit 1
fi
echo "example-jvmti: passed: $unloads unloads, $in_jit samples in compiled code, every answer right"
