#!/bin/sh
# SPDX-License-Identifier: MIT
# system-test.sh CONSUMER_DIR
#
# Builds the consumers against the liblatch installed on this system (the
# Debian packages liblatch2 and liblatch-dev): consumer.c and consumer.cpp
# with `pkg-config --cflags --libs latch`, and the find-package/ project
# with CMake's find_package(latch), then runs each one.
set -eu
consumer=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flags=$(pkg-config --cflags --libs latch)
# shellcheck disable=SC2086 # flags are words
cc -std=c11 -Wall -Wextra -Wpedantic -Werror "$consumer/consumer.c" -o "$work/consumer" $flags -ldl
# shellcheck disable=SC2086
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror "$consumer/consumer.cpp" -o "$work/consumer-cxx" \
	$flags -ldl
"$work/consumer" shared
"$work/consumer-cxx" shared

cmake -S "$consumer/find-package" -B "$work/cmake" -DLATCH_CONSUMER_SOURCE_DIR="$consumer" \
	>"$work/configure.log" 2>&1 || {
	cat "$work/configure.log" >&2
	exit 1
}
cmake --build "$work/cmake" >"$work/build.log" 2>&1 || {
	cat "$work/build.log" >&2
	exit 1
}
"$work/cmake/consumer-shared" shared
"$work/cmake/consumer-static" static
"$work/cmake/consumer-cxx" shared
echo "system packages: the consumers built with pkg-config and CMake ran"
