#!/bin/sh
# SPDX-License-Identifier: MIT
# check-abi-baseline.sh ABIDIFF READELF BASELINE LIBRARY HEADERS
#
# Compares LIBRARY with the stored ABI of the current release, BASELINE
# (written by abidw; `make abi-baseline` regenerates it), with abidiff:
# the types of every exported function, the layouts of the structs they
# take (the ones the inline readers in HEADERS use too) and the symbol
# versions.  Added functions are compatible.  A change to, or removal of,
# anything in the baseline fails, unless LIBRARY announces the break: a
# SONAME other than the baseline's, or a version node the baseline does
# not have.  See CONTRIBUTING.md.
set -eu
abidiff=$1 readelf=$2 baseline=$3 lib=$4 headers=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Layouts come from the debug information; without it abidiff would see
# symbol names only, which the abi test already checks.
"$readelf" -S "$lib" | grep -q '\.debug_info' || {
	echo "skipped: $(basename "$lib") was built without debug information (-g): no layouts to compare"
	exit 77
}

status=0
"$abidiff" --no-added-syms --headers-dir2 "$headers" "$baseline" "$lib" >"$tmp/report" 2>&1 ||
	status=$?
if [ $((status & 3)) != 0 ]; then
	cat "$tmp/report" >&2
	echo "FAIL: abidiff could not compare $lib with $baseline (exit $status)" >&2
	exit 1
fi
if [ "$status" = 0 ]; then
	echo "ABI baseline: $(basename "$lib") keeps every function and layout of the baseline"
	exit 0
fi

old_soname=$(sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$baseline")
new_soname=$("$readelf" -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
old_nodes=$(grep -o "version='[^']*'" "$baseline" | sort -u)
new_nodes=$("$readelf" -V "$lib" | sed -n 's/.*Name: \(LATCH_[^ ]*\).*/version='"'"'\1'"'"'/p' | sort -u)
if [ "$old_soname" != "$new_soname" ] || [ -n "$(echo "$new_nodes" | grep -vxF "$old_nodes")" ]; then
	cat "$tmp/report"
	echo "ABI baseline: the ABI changed and the library says so (SONAME $old_soname -> $new_soname," \
		"version nodes: $(echo $new_nodes)); regenerate the baseline with 'make abi-baseline' at the release"
	exit 0
fi
cat "$tmp/report" >&2
echo "FAIL: $(basename "$lib") breaks the ABI of the baseline $(basename "$baseline") with the same" \
	"SONAME ($new_soname) and version nodes; see CONTRIBUTING.md" >&2
exit 1
