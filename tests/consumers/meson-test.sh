#!/bin/sh
# SPDX-License-Identifier: MIT
# meson-test.sh SOURCE_DIR CONSUMER_DIR CC CXX VERSION
#
# Builds a downstream meson project (meson-subproject/) with liblatch's
# source as its subproject, then checks that only the library was built
# from it and that the consumers run.  Skipped (exit 77) without meson
# and ninja (Debian packages meson, ninja-build).
set -eu
src=$1 consumer=$2 cc=$3 cxx=$4 version=$5

# meson.build states the version CMakeLists.txt does.
grep -q "^  version: '$version',\$" "$src/meson.build" || {
	echo "FAIL: meson.build does not say version '$version' (the CMake project's)" >&2
	exit 1
}

for tool in meson ninja; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "skipped: $tool is not installed (Debian packages meson, ninja-build)"
		exit 77
	}
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project/subprojects"
cp "$consumer/meson-subproject/meson.build" "$consumer/consumer.c" "$consumer/consumer.cpp" \
	"$work/project/"
ln -s "$src" "$work/project/subprojects/latch"
CC=$cc CXX=$cxx meson setup "$work/build" "$work/project" >"$work/setup.log" 2>&1 || {
	cat "$work/setup.log" >&2
	exit 1
}
ninja -C "$work/build" >"$work/build.log" 2>&1 || {
	cat "$work/build.log" >&2
	exit 1
}
# From liblatch, the library and nothing else.
built=$(cd "$work/build" && find subprojects -type f \( -name '*.so*' -o -name '*.a' -o -perm -u+x \) |
	grep -v '\.p/' | sort)
others=$(echo "$built" | grep -v '^subprojects/latch/liblatch\.\(so\|a\)' || true)
[ -n "$built" ] && [ -z "$others" ] || {
	echo "FAIL: the subproject built no library, or more than the library:" >&2
	echo "$built" >&2
	exit 1
}
LD_LIBRARY_PATH="$work/build/subprojects/latch" "$work/build/consumer" shared
LD_LIBRARY_PATH="$work/build/subprojects/latch" "$work/build/consumer-cxx" shared
echo "meson subproject: only the library was built; the consumers ran"
