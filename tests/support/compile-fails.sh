#!/bin/sh
# SPDX-License-Identifier: MIT
# compile-fails.sh DEFINE EXPECTED COMPILER ARG...
#
# Passes only if the command "COMPILER ARG..." compiles without a word of
# output, and the same command with -DDEFINE added fails with an error
# whose text contains EXPECTED.  The first run proves that the command
# line is sound, so a failure of the second comes from DEFINE.
define=$1
expected=$2
shift 2
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

if ! "$@" >"$out" 2>&1 || [ -s "$out" ]; then
	echo "FAIL: the right program does not compile cleanly: $*"
	cat "$out"
	exit 1
fi
if "$@" "-D$define" >"$out" 2>&1; then
	echo "FAIL: compiles with -D$define, which must be rejected: $*"
	cat "$out"
	exit 1
fi
if ! grep -F -q -- "$expected" "$out"; then
	echo "FAIL: -D$define is rejected, but not with \"$expected\": $*"
	cat "$out"
	exit 1
fi
echo "ok: -D$define is rejected with \"$expected\"; the right program compiles cleanly"
