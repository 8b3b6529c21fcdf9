#!/bin/sh
# SPDX-License-Identifier: MIT
# run-test.sh JAVA JAVAC AGENT WORKLOAD_JAVA CLASS_DIR [LATCH_INSPECT]
#
# The test example-jvmti: runs JAVA with the agent on the workload for
# LATCH_JVMTI_SECONDS (default 12) under a watchdog and passes when
# HotSpot unloaded compiled code (unloads > 0), samples landed in compiled
# code (in_jit > 0) and the check found no wrong answer.  While the JVM
# runs, LATCH_INSPECT reads the code map the agent published: the listing
# must show jvm-code, --resolve must name a method the agent stored and
# --perf-map must write lines (skipped, saying why, where ptrace rules
# forbid reading the JVM).  Exit 77 when there is no java.  JAVA and
# JAVAC fall back to those on the PATH.
set -u
java=$1 javac=$2 agent=$3 source=$4 classes=$5 inspect=${6:-}
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
tmp=$(mktemp -d) || exit 1
jvm=
trap '[ -z "$jvm" ] || kill "$jvm" 2>/dev/null; rm -rf "$tmp"' EXIT
out=$tmp/out
sleep_a_little() {
	sleep 0.3 2>/dev/null || sleep 1
}

# One look at the JVM (pid $pid) from outside; sets why when something is
# not right.  Returns 2 when latch-inspect may not read the JVM.
look() {
	why=
	if ! "$inspect" "$pid" >"$tmp/list" 2>"$tmp/err"; then
		grep -q 'Operation not permitted' "$tmp/err" && return 2
		why="latch-inspect $pid: $(cat "$tmp/err")"
		return 1
	fi
	if ! grep -Eq '^jvm-code +range +[0-9]+ +names' "$tmp/list"; then
		why="no jvm-code in the listing: $(cat "$tmp/list")"
		return 1
	fi
	# The middle of each method the agent stored lately, with its name: the
	# workload unloads code all the time, but some of these are still there.
	tail -n 2000 "$tmp/loads" | while read -r start end name; do
		case $start$end in
		*[!0-9a-fx]* | "") continue ;;
		esac
		[ -n "$name" ] && printf '%016x %s\n' $((start + (end - start) / 2)) "$name"
	done >"$tmp/logged"
	# Exit status 2: some addresses are not in the map (any more).
	# shellcheck disable=SC2046 # the addresses are words
	"$inspect" --resolve "$pid" $(cut -d' ' -f1 "$tmp/logged") >"$tmp/resolved" 2>"$tmp/err"
	# "ADDR jvm-code START-END NAME+OFFSET", NAME the one the agent logged for ADDR.
	awk 'NR == FNR { name[$1] = $2; next }
	     $2 == "jvm-code" { sub(/\+(0x[0-9a-f]+|0)$/, "", $4); if ($4 == name[$1]) { print; exit } }' \
		"$tmp/logged" "$tmp/resolved" >"$tmp/match"
	if ! [ -s "$tmp/match" ]; then
		why="--resolve named none of the methods the agent stored: $(cat "$tmp/err") $(head -3 "$tmp/resolved")"
		return 1
	fi
	if ! "$inspect" --perf-map --output "$tmp/perf.map" "$pid" 2>"$tmp/err" ||
		! [ -s "$tmp/perf.map" ]; then
		why="--perf-map wrote no lines: $(cat "$tmp/err")"
		return 1
	fi
	return 0
}

# latch-inspect on the running JVM, once it stored its first methods.  A
# loaded machine starts the JVM slowly and the workload's code comes and
# goes: up to 60 s to start, then up to 10 looks 0.3 s apart.  Sets
# inspect_fail when no look was right.
inspect_fail=
inspect_jvm() {
	if ! [ -x "$inspect" ]; then
		echo "example-jvmti: no latch-inspect: the map was not looked at from outside"
		return
	fi
	waited=0
	until [ -s "$tmp/pid" ] && [ -f "$tmp/loads" ] && [ "$(wc -l <"$tmp/loads")" -ge 20 ]; do
		if ! kill -0 "$jvm" 2>/dev/null; then
			echo "example-jvmti: the JVM ended before latch-inspect could look at it"
			return
		fi
		waited=$((waited + 1))
		if [ "$waited" -ge 200 ]; then
			inspect_fail="the agent stored no methods for a minute"
			return
		fi
		sleep_a_little
	done
	pid=$(cat "$tmp/pid")
	looks=0
	while :; do
		look
		case $? in
		0) break ;;
		2)
			echo "example-jvmti: latch-inspect may not read the JVM (ptrace rules): not looked at from outside"
			return
			;;
		esac
		looks=$((looks + 1))
		if ! kill -0 "$jvm" 2>/dev/null; then
			echo "example-jvmti: the JVM ended while latch-inspect looked at it: $why"
			return
		fi
		if [ "$looks" -ge 10 ]; then
			inspect_fail="latch-inspect, $looks looks: $why"
			return
		fi
		sleep_a_little
	done
	echo "example-jvmti: latch-inspect $pid: jvm-code listed; resolved $(cut -d' ' -f1,4 "$tmp/match");" \
		"--perf-map wrote $(wc -l <"$tmp/perf.map") lines"
}

agent_options=loads=$tmp/loads
echo "example-jvmti: $java $flags -agentpath:$agent=$agent_options -cp $classes Workload $seconds"
status=0
# The watchdog: a JVM that hangs (a lookup that waited, a deadlock in the
# agent) is killed, and the test fails, well before CTest's own timeout
# (which is all there is without coreutils' timeout).
watchdog=
command -v timeout >/dev/null && watchdog="timeout -k 10 $((seconds + 90))"
# In the background, for latch-inspect to look at: the sh writes its pid,
# then exec makes it the JVM, so $tmp/pid is the JVM's.
# shellcheck disable=SC2016,SC2086 # the inner sh expands $$; flags are words
$watchdog sh -c 'echo $$ >"$0" && exec "$@"' "$tmp/pid" \
	"$java" $flags "-agentpath:$agent=$agent_options" -cp "$classes" Workload "$seconds" \
	>"$out" 2>&1 &
jvm=$!
inspect_jvm
wait "$jvm" || status=$?
jvm=
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
[ -z "$inspect_fail" ] || fail="$fail; $inspect_fail"
case $check in
*" answers, 0 wrong") ;;
*) fail="$fail; the check found wrong answers (or did not run)" ;;
esac
if [ -n "$fail" ]; then
	echo "example-jvmti: FAIL:${fail#;}"
	exit 1
fi
echo "example-jvmti: passed: $unloads unloads, $in_jit samples in compiled code, every answer right"
