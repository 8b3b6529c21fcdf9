#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/model/run.sh [BUILD_DIR] - model-check the latch's memory ordering
# with GenMC (`make model-check`; see tests/model/README.md).
#
# Runs every harness of tests/model on the library's real sources, which
# must verify (no assertion failure, no data race, under RC11), then every
# mutant: a copy of include/ and src/ in BUILD_DIR/model with one ordering
# or step of the protocol taken out by a textual rewrite.  Each mutant must
# be caught by every harness it applies to, except the pairs listed in
# SURVIVES below, which must verify: they are orderings a structure does
# not rely on, each with its reason.  Ends with one summary line; exits
# non-zero when any expectation fails.  The B+-tree harnesses (range, map)
# are compiled with the node capacity lowered (-DLATCH_BTREE_FANOUT=4u,
# harness_cflags below).
#
# Without GenMC (not on PATH and no GENMC=/path/to/genmc) it prints one
# line saying so and exits 0.
#
# Environment: GENMC (the genmc binary), MODEL_TIMEOUT (seconds per GenMC
# run, default 900), MODEL_ONLY (space-separated harness names to run).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OUT=$BUILD/model
TIMEOUT=${MODEL_TIMEOUT:-900}

GENMC=${GENMC:-$(command -v genmc 2>/dev/null || true)}
if [ -z "$GENMC" ]; then
	echo "model-check: skipped: genmc is not on PATH and GENMC is not set" \
		"(tests/model/README.md says how to install it)"
	exit 0
fi
if ! [ -x "$GENMC" ] && ! command -v "$GENMC" >/dev/null 2>&1; then
	echo "model-check: skipped: GENMC=$GENMC is not an executable" \
		"(tests/model/README.md says how to install it)"
	exit 0
fi

HARNESSES=${MODEL_ONLY:-"seq value tree batch range map range-payload"}

# Every GenMC run: RC11 (GenMC's default model) with its data-race
# detection (on by default).  --disable-spin-assume: GenMC would otherwise
# cut every execution in which a reader's attempt fails and loops back;
# that reduction is sound, but the harnesses are small enough to explore
# the retries themselves.  --disable-estimation: no sampling run first.
GENMC_FLAGS=(--disable-estimation --disable-spin-assume)
# What the project's release builds define (debug-only checks are
# writer-side searches that add nothing to what is checked here).
CFLAGS=(-DNDEBUG)

# Extra compiler flags of one harness.
harness_cflags() {
	case $1 in
	value) echo -fno-builtin-memcpy ;;                    # see the memcpy() shim in model-value.c
	# -g0: GenMC 0.11 inlines the memcpy() shim into the B+-tree's writer
	# with debug locations its own module check rejects (no effect on the code).
	# -DLATCH_BTREE_FANOUT=4u: the B+-tree's node capacity lowered (model-btree.h).
	range | map | range-payload) echo -fno-builtin-memcpy -fno-builtin-memset -g0 -DLATCH_BTREE_FANOUT=4u ;; # see the shims in model-btree.h
	esac
}

# The mutants: name, the harnesses it applies to ("all" or a list), the
# file it rewrites, a Perl substitution that must match at least once, and
# optionally the failure GenMC must report (any, when empty).  Each takes
# out one thing the ordering argument of docs/design.md, section 3, relies
# on.
#
# The three link mutants must be caught by the data race on the new
# element's key that section 3.4 predicts.  Their copies also lower
# LATCH_RB_MAX_DEPTH from 128 to 8 (BOUND_REWRITE): no tree here is more
# than 4 nodes deep at any instruction of the writer, but with relaxed
# links a reader of a copy being changed can walk in circles, and GenMC
# would explore every walk up to 128 steps (minutes per harness instead of
# seconds).  Requiring the race, not just any failure, keeps a descent cut
# short by the lower bound from counting as a catch.
MUTANTS=(
	# W2: the flip's release store made relaxed.
	"flip-relaxed|all|include/latch/seq.h|s/LATCH_STORE_RELEASE\(&s->sequence, next\)/LATCH_STORE_RELAXED(&s->sequence, next)/"
	# W3: the flip's release fence removed.
	"flip-no-fence|all|include/latch/seq.h|s/LATCH_FENCE_RELEASE\(\);/(void)0;/"
	# R1: the reader's acquire load of the count made relaxed.
	"begin-relaxed|all|include/latch/seq.h|s/return LATCH_LOAD_ACQUIRE\(&s->sequence\);/return LATCH_LOAD_RELAXED(&s->sequence);/"
	# R3: the reader's acquire fence removed.
	"retry-no-fence|all|include/latch/seq.h|s/LATCH_FENCE_ACQUIRE\(\);/(void)0;/"
	# R4: the reader never retries (it keeps its first attempt).
	"skip-retry|all|include/latch/seq.h|s/return LATCH_LOAD_RELAXED\(&s->sequence\) != start;/return (void)start, false;/"
	# The writer changes the copy readers are on first (count & 1), flips,
	# then changes the other one, which readers are on by then.
	"readers-copy|all|include/latch/seq.h|s/return \(LATCH_LOAD_RELAXED\(&s->sequence\) & 1u\) \^ 1u;/return LATCH_LOAD_RELAXED(&s->sequence) \& 1u;/ * s/return \(next & 1u\) \^ 1u;/return next \& 1u;/"
	# 3.4: the store that links a new node (latch_rb_link_node) relaxed.
	"relaxed-publish|tree batch|include/latch/rbtree.h|s/LATCH_STORE_RELEASE\(link, node\)/LATCH_STORE_RELAXED(link, node)/|Non-atomic race"
	# 3.4: the link stores of rotations and erase (set_child, replace_child) relaxed.
	"relaxed-rotate|tree batch|src/rbtree.c|s/LATCH_STORE_RELEASE\(/LATCH_STORE_RELAXED(/g|Non-atomic race"
	# 3.4: the reader's link loads (latch_rb_root_node, latch_rb_child) relaxed.
	"relaxed-loads|tree batch|include/latch/rbtree.h|s/LATCH_LOAD_ACQUIRE\(/LATCH_LOAD_RELAXED(/g|Non-atomic race"
	# 7.2: leaves and inner nodes from one pool (the inner one), so memory
	# a stale reader reached as an inner node can come back as a leaf and
	# its values be followed as references.
	"shared-pool|map|src/btree-write.c|s/latch_btree_pool_take\(&t->pool\[[^\]]*\]/latch_btree_pool_take(&t->pool[LATCH_BTREE_INNER_POOL]/g * s/latch_btree_pool_give\(&t->pool\[[^\]]*\]/latch_btree_pool_give(&t->pool[LATCH_BTREE_INNER_POOL]/g|Attempt to access non-allocated memory"
	# 7.2: the reader's descent no longer stops at a 0 reference (a free
	# node's free-list link, or a fresh node's slot).
	"null-child|map|src/btree-descend.c|s/if \(!n \x7c\x7c (depth\+\+ >= LATCH_BTREE_MAX_DEPTH\) \{)/if (\$1/|Attempt to access non-allocated memory"
	# The payload slot's copy made after the reader's re-check (src/range.c's own test mutant 1).
	"late-copy|range-payload|src/range.c|s/#define LATCH_RANGE_MUTANT 0\n/#define LATCH_RANGE_MUTANT 1\n/"
	# A new range's payload slot filled after the update that publishes it (test mutant 2).
	"late-fill|range-payload|src/range.c|s/#define LATCH_RANGE_MUTANT 0\n/#define LATCH_RANGE_MUTANT 2\n/"
)

# Harness:mutant pairs expected to verify, with the reason (tests/model/README.md).
# The latched tree does not need the flip's release fence (W3) nor the
# reader's acquire fence (R3): every link a reader can load that the writer
# stored after a flip is a release store, loaded with acquire, so the reader
# synchronizes with the writer at that link and its recheck of the count
# (R4) sees the flip by coherence, fences or not.
SURVIVES=(
	"tree:flip-no-fence|tree links are release stores read by acquire loads: they order the recheck"
	"tree:retry-no-fence|tree links are release stores read by acquire loads: they order the recheck"
	"batch:flip-no-fence|tree links are release stores read by acquire loads: they order the recheck"
	"batch:retry-no-fence|tree links are release stores read by acquire loads: they order the recheck"
)

# The reason a pair is expected to survive, or nothing.
survives() {
	local entry
	for entry in ${SURVIVES[@]+"${SURVIVES[@]}"}; do
		case $entry in "$1:$2|"*)
			echo "${entry#*|}"
			return 0
			;;
		esac
	done
	return 1
}

mkdir -p "$OUT"

# GenMC compiles each harness to /tmp/__genmc.ll.XXXXXX (a fixed folder)
# and leaves the file there.  The files of this user that appeared during
# one run are that run's: remove them after it.
genmc_leftovers() {
	find /tmp -maxdepth 1 -name '__genmc.ll.*' -user "$(id -u)" 2>/dev/null | sort
}

# The link mutants' lower descent bound (see MUTANTS).
BOUND_FILE=include/latch/rbtree.h
BOUND_REWRITE='s/#define LATCH_RB_MAX_DEPTH 128\n/#define LATCH_RB_MAX_DEPTH 8\n/'

# rewrite NAME TREE FILE PERL: apply PERL to TREE/FILE; it must change it.
rewrite() {
	local name=$1 tree=$2 file=$3 perl=$4
	cp "$tree/$file" "$tree/$file.orig"
	perl -0777 -pi -e "\$n = ($perl); END { exit(\$n ? 0 : 1) }" "$tree/$file" || {
		echo "model-check: mutant $name: the rewrite no longer matches $file; update run.sh" >&2
		return 1
	}
	if cmp -s "$tree/$file.orig" "$tree/$file"; then
		echo "model-check: mutant $name: the rewrite changed nothing in $file" >&2
		return 1
	fi
	rm "$tree/$file.orig"
}

# make_copy NAME: a copy of include/ and src/ to rewrite.
make_copy() {
	local dir=$OUT/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -R "$ROOT/include" "$ROOT/src" "$dir/"
}

# make_tree NAME FILE PERL [BOUND]: make_copy NAME with FILE rewritten (and
# the descent bound lowered when BOUND is not empty).
make_tree() {
	local dir=$OUT/$1
	make_copy "$1" || return 1
	rewrite "$1" "$dir" "$2" "$3" || return 1
	if [ -n "${4:-}" ]; then
		rewrite "$1" "$dir" "$BOUND_FILE" "$BOUND_REWRITE" || return 1
	fi
}

TOTAL_EXECS=0
START=$(date +%s.%N)
FAILED=0

# genmc_run HARNESS TREE LOG: verify one harness against one source tree.
# Sets EXECS, SECS, RESULT (verified, error, timeout or broken).
genmc_run() {
	local h=$1 tree=$2 log=$3 t0 rc before
	before=$(genmc_leftovers)
	t0=$(date +%s.%N)
	# shellcheck disable=SC2046
	timeout "$TIMEOUT" "$GENMC" "${GENMC_FLAGS[@]}" -- "${CFLAGS[@]}" $(harness_cflags "$h") \
		-I"$tree/include" -I"$tree" "$ROOT/tests/model/model-$h.c" >"$log" 2>&1
	rc=$?
	comm -13 <(echo "$before") <(genmc_leftovers) | xargs -r rm -f
	SECS=$(awk "BEGIN { print $(date +%s.%N) - $t0 }")
	EXECS=$(sed -n 's/^Number of complete executions explored: \([0-9]*\).*/\1/p' "$log" | tail -1)
	EXECS=${EXECS:-0}
	TOTAL_EXECS=$((TOTAL_EXECS + EXECS))
	if [ $rc = 124 ]; then
		RESULT=timeout
	elif [ $rc = 0 ] && grep -q '^No errors were detected' "$log"; then
		RESULT=verified
	elif grep -q '^Error: ' "$log"; then
		RESULT=error
	else
		RESULT=broken # did not compile, or GenMC could not run it
	fi
}

# What an error report says, in a few words.
error_kind() {
	sed -n 's/^Error: \(.*\)$/\1/p' "$1" | head -1 | sed 's/!$//'
}

printf '%-8s %-16s %-10s %10s %8s  %s\n' harness mutant result executions seconds note
declare -A HARNESS_OK=()
# The real sources.
for h in $HARNESSES; do
	log=$OUT/$h.log
	genmc_run "$h" "$ROOT" "$log"
	note=
	if [ "$RESULT" = verified ]; then
		HARNESS_OK[$h]=1
	else
		FAILED=$((FAILED + 1))
		note="FAIL: expected no error ($log)"
	fi
	printf '%-8s %-16s %-10s %10s %8.2f  %s\n' "$h" - "$RESULT" "$EXECS" "$SECS" "$note"
done

CAUGHT=0
EXPLAINED=0
MUTANT_RUNS=0
for m in "${MUTANTS[@]}"; do
	IFS='|' read -r name applies file perl expect <<<"$m"
	# Lower the descent bound for the link mutants (those expecting the race).
	bound=
	[ "$expect" = "Non-atomic race" ] && bound=1
	make_tree "$name" "$file" "$perl" "$bound" || {
		FAILED=$((FAILED + 1))
		continue
	}
	for h in $HARNESSES; do
		[ "$applies" = all ] || [[ " $applies " == *" $h "* ]] || continue
		log=$OUT/$h-$name.log
		genmc_run "$h" "$OUT/$name" "$log"
		MUTANT_RUNS=$((MUTANT_RUNS + 1))
		if reason=$(survives "$h" "$name"); then
			if [ "$RESULT" = verified ]; then
				EXPLAINED=$((EXPLAINED + 1))
				note="survives as expected: $reason"
			else
				FAILED=$((FAILED + 1))
				note="FAIL: expected to survive, got $RESULT ($log)"
			fi
		elif [ "$RESULT" = error ] &&
			{ [ -z "$expect" ] || [ "$(error_kind "$log")" = "$expect" ]; }; then
			CAUGHT=$((CAUGHT + 1))
			note="caught: $(error_kind "$log")"
		elif [ "$RESULT" = error ]; then
			FAILED=$((FAILED + 1))
			note="FAIL: caught by $(error_kind "$log"), not by the expected $expect ($log)"
		else
			FAILED=$((FAILED + 1))
			note="FAIL: not caught ($log)"
		fi
		printf '%-8s %-16s %-10s %10s %8.2f  %s\n' "$h" "$name" "$RESULT" "$EXECS" "$SECS" "$note"
	done
done

SECS=$(awk "BEGIN { print $(date +%s.%N) - $START }")
nh=$(echo $HARNESSES | wc -w)
printf 'model-check: %d/%d harnesses verified, %d executions explored in %.0f s; mutants caught %d / %d (%d more survive as explained)%s\n' \
	"${#HARNESS_OK[@]}" "$nh" "$TOTAL_EXECS" "$SECS" "$CAUGHT" "$((MUTANT_RUNS - EXPLAINED))" \
	"$EXPLAINED" "$([ $FAILED = 0 ] && echo || echo "; $FAILED FAILED")"
[ $FAILED = 0 ]
