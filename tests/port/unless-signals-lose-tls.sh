#!/bin/sh
# SPDX-License-Identifier: MIT
# unless-signals-lose-tls.sh [EMULATOR...] -- PROBE NAME PROGRAM [ARGS...]
#
# Runs PROGRAM ARGS (through the cross build's emulator, if any) unless
# PROBE (signal-tls-probe) finds that threads lose their thread-local
# storage across signal handlers here: then the probe's exit status 77
# (skipped) and its message, which names NAME, stand for the test.
set -eu
emulator=
while [ "$1" != -- ]; do
	emulator="$emulator $1"
	shift
done
shift
probe=$1 name=$2
shift 2
status=0
$emulator "$probe" "$name" || status=$?
[ "$status" = 0 ] || exit "$status"
exec $emulator "$@"
