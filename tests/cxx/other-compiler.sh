#!/bin/sh
# SPDX-License-Identifier: MIT
# other-compiler.sh CC CXX STD SOURCE_DIR PROGRAM...
#
# The C++ wrappers with the compiler the build does not use (clang++ for a
# gcc build, g++ for a clang one): the library from SOURCE_DIR/src built
# with CC, then each PROGRAM (a .cpp file) built with CXX at -std=STD and
# the project's warnings as errors, linked to it and run.  Flags from the
# environment: LATCH_OTHER_CFLAGS, LATCH_OTHER_CXXFLAGS (the build's own),
# LATCH_SANITIZE_FLAGS (for both: the library is built here, with CC, as
# one compiler's sanitizer runtime does not serve the other's code).
# CMakeLists.txt runs it only when both compilers are installed.
set -eu
cc=$1 cxx=$2 std=$3 src=$4
shift 4
cflags="${LATCH_OTHER_CFLAGS-} ${LATCH_SANITIZE_FLAGS-}"
cxxflags="${LATCH_OTHER_CXXFLAGS-} ${LATCH_SANITIZE_FLAGS-}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objs=""
while read -r file; do
	obj="$work/${file%.c}.o"
	# shellcheck disable=SC2086 # flags are words
	"$cc" -std=c11 -O2 -g $cflags -I"$src/include" -c "$src/src/$file" -o "$obj"
	objs="$objs $obj"
done <"$src/src/sources.txt"

for program in "$@"; do
	name=$(basename "$program" .cpp)
	# shellcheck disable=SC2086 # flags and objects are words
	"$cxx" -std="$std" -O2 -g -Wall -Wextra -Wpedantic -Werror $cxxflags -I"$src/include" \
		-I"$src/tests/support" "$program" $objs -o "$work/$name" -pthread -lrt
	"$work/$name"
done
echo "$cxx -std=$std: every program built without a warning and passed"
