#!/bin/sh
# SPDX-License-Identifier: MIT
# check-debian-symbols.sh MAP SYMBOLS CHANGELOG VERSION
#
# Fails when the Debian symbols file SYMBOLS (debian/liblatch2.symbols,
# written by dpkg-gensymbols) does not list exactly the names and version
# nodes of the version script MAP, or when the newest entry of the Debian
# CHANGELOG is not the project's VERSION.  After a change to the exports,
# regenerate it from a package build (see CONTRIBUTING.md).
set -eu
map=$1 symbols=$2 changelog=$3 version=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# NODE name, for every global name of each version node of MAP.
awk '/^[A-Za-z_0-9.]+ *\{/ { node = $1 } /global:/ { on = 1; next } /local:|^}/ { on = 0 }
     on && /;/ { gsub(/[ \t;]/, ""); print $0 "@" node }' "$map" | sort -u >"$tmp/mapped"
# The symbols file's entries, without the version nodes' own entries.
awk '/^ / { print $1 }' "$symbols" | grep -v '^\(LATCH_[^@]*\)@\1$' | sort -u >"$tmp/listed"
diff -u "$tmp/mapped" "$tmp/listed" >"$tmp/diff" || {
	echo "FAIL: $symbols does not list the exports of $map (- map, + symbols file):" >&2
	cat "$tmp/diff" >&2
	status=1
}
first=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$changelog")
[ "$first" = "$version" ] || {
	echo "FAIL: $changelog's newest version is '$first', the project's is '$version'" >&2
	status=1
}
[ "$status" = 0 ] && echo "Debian symbols file: $(wc -l <"$tmp/listed") symbols, as in the version script"
exit "$status"
