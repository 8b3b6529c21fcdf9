#!/bin/sh
# SPDX-License-Identifier: MIT
# inspect-test.sh INSPECT TARGET
#
# latch-inspect end to end against a live process (TARGET, inspect-target.c):
# the listing, --dump, --resolve, and --perf-map compared with the perf map
# the target says it must give.
set -eu
inspect=$1 target=$2
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

mkfifo "$tmp/ready"
"$target" "$tmp/expected.map" >"$tmp/ready" &
pid=$!
read -r line <"$tmp/ready"
[ "$line" = ready ] || fail "the target did not start"

"$inspect" "$pid" >"$tmp/list"
grep -Eq '^symbols +range +500  names' "$tmp/list" || fail "listing: $(cat "$tmp/list")"
grep -Eq '^ids +map +500' "$tmp/list" || fail "listing: $(cat "$tmp/list")"

"$inspect" --dump symbols "$pid" >"$tmp/dump"
[ "$(wc -l <"$tmp/dump")" = 500 ] || fail "--dump symbols gave $(wc -l <"$tmp/dump") lines"
grep -qx '0000000000010040-0000000000010051 fn_1' "$tmp/dump" || fail "--dump: $(head -3 "$tmp/dump")"
"$inspect" --dump ids "$pid" | grep -qx '000000000000000a 0x1' || fail "--dump ids"

"$inspect" --resolve "$pid" 10045 10050 10055 >"$tmp/resolve" || true
grep -qx '0000000000010045 symbols 0000000000010040-0000000000010051 fn_1+0x5' "$tmp/resolve" ||
	fail "--resolve: $(cat "$tmp/resolve")"
grep -qx '0000000000010055 ?' "$tmp/resolve" || fail "--resolve of a gap: $(cat "$tmp/resolve")"

"$inspect" --perf-map --output "$tmp/perf.map" "$pid" 2>/dev/null
cmp "$tmp/expected.map" "$tmp/perf.map" || fail "--perf-map differs from the map's contents"
"$inspect" --perf-map "$pid" 2>/dev/null
cmp "$tmp/expected.map" "/tmp/perf-$pid.map" || fail "/tmp/perf-$pid.map differs"
rm -f "/tmp/perf-$pid.map"

"$inspect" --dump nothing "$pid" 2>/dev/null && fail "--dump of an unpublished name succeeded"
kill "$pid"
wait "$pid" 2>/dev/null || true
"$inspect" "$pid" 2>/dev/null && fail "a process that exited can be listed"
pid=
echo "latch-inspect: listing, --dump, --resolve and --perf-map right against a live process"
