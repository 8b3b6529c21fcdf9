#!/bin/sh
# SPDX-License-Identifier: MIT
# check-abi.sh NM READELF LIBRARY MAP SONAME PAGES HEADERS
#
# The version script MAP is the one list of the ABI's names.  Fails when
# the symbols LIBRARY exports (nm -D --defined-only) differ from the
# global names of MAP or from the functions and objects the public
# HEADERS declare with LATCH_API, when
# an exported symbol carries another version node than MAP gives it, when the SONAME is not
# SONAME, or when an exported symbol has no man page in PAGES.
set -eu
nm=$1 readelf=$2 lib=$3 map=$4 soname=$5 pages=$6 headers=$7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

fail() {
	echo "FAIL: $*" >&2
	status=1
}

# Exported names (version suffixes stripped), without the version nodes (type A).
"$nm" -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/exported"
# name@@NODE for every global name of each version node of the script.
awk '/^[A-Za-z_0-9.]+ *\{/ { node = $1 } /global:/ { on = 1; next } /local:|^}/ { on = 0 }
     on && /;/ { gsub(/[ \t;]/, ""); print $0 "@@" node }' "$map" | sort -u >"$tmp/versioned"
sed 's/@.*//' "$tmp/versioned" | sort -u >"$tmp/mapped"

[ -s "$tmp/exported" ] || fail "$lib exports nothing"
diff -u "$tmp/mapped" "$tmp/exported" >"$tmp/d1" ||
	fail "exported symbols differ from the version script $map (- map only, + exported only):
$(cat "$tmp/d1")"
# Functions declared "LATCH_API <type> name(" and objects declared
# "LATCH_API extern <type> name;" in the public headers.
sed -n -e 's/^LATCH_API .*[ *]\(latch_[a-z0-9_]*\)(.*/\1/p' \
	-e 's/^LATCH_API extern [^(]*[ *]\(latch_[a-z0-9_]*\);.*/\1/p' "$headers"/*.h |
	sort -u >"$tmp/declared"
diff -u "$tmp/mapped" "$tmp/declared" >"$tmp/d2" ||
	fail "LATCH_API declarations differ from the version script (- map only, + declared only):
$(cat "$tmp/d2")"

misversioned=$(sort -u "$tmp/raw" | comm -23 - "$tmp/versioned")
[ -z "$misversioned" ] || fail "exported without the version node the script gives them: $misversioned"

actual=$("$readelf" -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$actual" = "$soname" ] || fail "SONAME is '$actual', expected '$soname'"

# Every exported symbol is named on a man page's NAME line.
awk 'prev == "# NAME" && $0 != "" { print; prev = "" } $0 == "# NAME" { prev = $0 }' \
	"$pages"/*.3.scd | sed 's/ - .*//; s/, /\n/g' | sort -u >"$tmp/documented"
undocumented=$(comm -23 "$tmp/exported" "$tmp/documented")
[ -z "$undocumented" ] || fail "exported but on no man page: $undocumented"

[ $status -ne 0 ] || echo "ABI ok: $(wc -l <"$tmp/exported") symbols, versions $(awk '/^[A-Za-z_0-9.]+ *\{/ { printf "%s ", $1 }' "$map")SONAME $actual"
exit $status
