#!/bin/sh
# SPDX-License-Identifier: MIT
# embed-test.sh HOW CMAKE SOURCE_DIR CONSUMER_DIR CC CXX GENERATOR
# (sanitizer flags, if any, in $LATCH_SANITIZE_FLAGS)
#
# Builds a downstream project (embed/CMakeLists.txt) that takes liblatch
# into its own build with HOW = add_subdirectory or FetchContent, then
# checks that the embedded liblatch added only its libraries (no tests,
# benchmarks, examples or man pages, no install rules, no build type
# forced on the parent) and that the consumers built against it run.
set -eu
how=$1 cmake=$2 src=$3 consumer=$4 cc=$5 cxx=$6 generator=$7
sanitize=${LATCH_SANITIZE_FLAGS-}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cmake" -S "$consumer/embed" -B "$work" -G "$generator" -DLATCH_EMBED_HOW="$how" \
	-DLATCH_EMBED_SOURCE_DIR="$src" -DLATCH_CONSUMER_SOURCE_DIR="$consumer" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
	-DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" >"$work/configure.log" 2>&1 || {
	cat "$work/configure.log" >&2
	exit 1
}

# The parent chose no build type; the embedded library must not set one.
if grep -q '^CMAKE_BUILD_TYPE:STRING=..*' "$work/CMakeCache.txt"; then
	echo "FAIL: the embedded liblatch set the parent's build type:" >&2
	grep '^CMAKE_BUILD_TYPE' "$work/CMakeCache.txt" >&2
	exit 1
fi

# Targets the embedded build defines: the libraries and the consumers only.
"$cmake" --build "$work" --target help >"$work/targets.log" 2>&1
for unwanted in latchbench latch-demo test-tree proof-singlestep man latch_checked; do
	if grep -Eq "(^|[^[:alnum:]_-])$unwanted(:|[[:space:]]|\$)" "$work/targets.log"; then
		echo "FAIL: the embedded build defines the target '$unwanted'" >&2
		exit 1
	fi
done
grep -q latch_static "$work/targets.log" || {
	echo "FAIL: no latch_static target in the embedded build" >&2
	cat "$work/targets.log" >&2
	exit 1
}
[ ! -e "$work/CTestTestfile.cmake" ] && [ ! -e "$work/liblatch/CTestTestfile.cmake" ] &&
	[ ! -e "$work/_deps/latch-build/CTestTestfile.cmake" ] || {
	echo "FAIL: the embedded build registers tests" >&2
	exit 1
}
# No install rules: nothing of liblatch would be installed with the parent.
if grep -rqs 'latch.pc\|include/latch' "$work"/liblatch/cmake_install.cmake \
	"$work"/_deps/latch-build/cmake_install.cmake; then
	echo "FAIL: the embedded build installs liblatch" >&2
	exit 1
fi

"$cmake" --build "$work" >"$work/build.log" 2>&1 || {
	cat "$work/build.log" >&2
	exit 1
}
"$work/consumer-shared" shared
"$work/consumer-static" static
"$work/consumer-cxx" shared
echo "embed ($how): only the libraries were built; the consumers ran"
