#!/bin/sh
# SPDX-License-Identifier: MIT
# install-test.sh HOW CMAKE BUILD_DIR SOURCE_DIR LIBDIR MANDIR CC CXX GENERATOR
# (sanitizer flags, if any, in $LATCH_SANITIZE_FLAGS)
#
# Installs the build in BUILD_DIR into a temporary prefix, checks the
# installed files (and, when man pages were built, that `man` finds every
# page), then builds consumer.c against the installed library:
#   HOW = pkg-config: with `pkg-config --cflags --libs latch`, linked to
#         the shared library (consumer.cpp too, which uses the C++
#         wrappers), and with `pkg-config --static`, which must
#         name -pthread (the range map's lock), linked to the static one
#         (exit 77, skipped, without pkg-config);
#   HOW = cmake: with find_package(latch), one program per library.
# Each program runs and checks where its liblatch code came from.
set -eu
how=$1 cmake=$2 build=$3 src=$4 libdir=$5 mandir=$6 cc=$7 cxx=$8 generator=$9
sanitize=${LATCH_SANITIZE_FLAGS-}

if [ "$how" = pkg-config ] && ! command -v pkg-config >/dev/null 2>&1; then
	echo "skipped: pkg-config is not installed (Debian package pkg-config)"
	exit 77
fi

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >"$prefix/install.log" || {
	cat "$prefix/install.log" >&2
	exit 1
}

for f in include/latch/tree.h include/latch/seq.h include/latch/rbtree.h \
	"$libdir/liblatch.a" "$libdir/liblatch.so" "$libdir/liblatch.so.2" \
	"$libdir/pkgconfig/latch.pc" "$libdir/cmake/latch/latchConfig.cmake"; do
	[ -e "$prefix/$f" ] || {
		echo "FAIL: $f was not installed" >&2
		exit 1
	}
done

# Every header in the source tree is installed, the C++ wrappers' and
# the inline internals' (detail/) too.
for h in "$src"/../../include/latch/*.h "$src"/../../include/latch/*.hpp \
	"$src"/../../include/latch/detail/*.h; do
	f=${h#"$src"/../../}
	[ -e "$prefix/$f" ] || {
		echo "FAIL: $f was not installed" >&2
		exit 1
	}
done

if [ -d "$build/docs/man3" ] && command -v man >/dev/null 2>&1; then
	for page in "$build"/docs/man3/*.3; do
		name=$(basename "$page" .3)
		MANPATH="$prefix/$mandir" MANPAGER=cat MANWIDTH=80 man 3 "$name" 2>/dev/null |
			grep -q "^NAME" || {
			echo "FAIL: 'man 3 $name' shows no page from $prefix/$mandir" >&2
			exit 1
		}
	done
	echo "man: every installed page and alias opens"
else
	echo "note: man pages not built or man not installed; pages not checked"
fi

work="$prefix/work"
mkdir "$work"
case $how in
pkg-config)
	export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
	flags=$(pkg-config --define-variable=prefix="$prefix" --cflags --libs latch)
	# shellcheck disable=SC2086 # flags are words
	"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $sanitize "$src/consumer.c" \
		-o "$work/consumer" $flags
	LD_LIBRARY_PATH="$prefix/$libdir" "$work/consumer" shared
	# shellcheck disable=SC2086 # flags are words
	"$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror $sanitize "$src/consumer.cpp" \
		-o "$work/consumer-cxx" $flags
	LD_LIBRARY_PATH="$prefix/$libdir" "$work/consumer-cxx" shared
	pc="pkg-config --define-variable=prefix=$prefix --static"
	static_libs=$($pc --libs latch)
	case " $static_libs " in
	*" -pthread "*) ;;
	*)
		echo "FAIL: pkg-config --static --libs latch does not name -pthread: $static_libs" >&2
		exit 1
		;;
	esac
	# The archive itself, and the rest of the static flags (-llatch would
	# pick the shared library).
	# shellcheck disable=SC2046,SC2086 # flags are words
	"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $sanitize $($pc --cflags latch) \
		"$src/consumer.c" -o "$work/consumer-static" "$prefix/$libdir/liblatch.a" \
		$($pc --libs-only-other latch)
	"$work/consumer-static" static
	;;
cmake)
	"$cmake" -S "$src/find-package" -B "$work" -G "$generator" \
		-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
		-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$sanitize" \
		-DCMAKE_CXX_FLAGS="$sanitize" -DLATCH_CONSUMER_SOURCE_DIR="$src" \
		>"$work/configure.log" 2>&1 || {
		cat "$work/configure.log" >&2
		exit 1
	}
	"$cmake" --build "$work" >"$work/build.log" 2>&1 || {
		cat "$work/build.log" >&2
		exit 1
	}
	"$work/consumer-shared" shared
	"$work/consumer-static" static
	"$work/consumer-cxx" shared
	;;
*)
	echo "usage: install-test.sh pkg-config|cmake ..." >&2
	exit 2
	;;
esac
