# scripts/lib/passes.sh - scripts/test's record of its passes, and the summary
# it ends with.  Sourced after setup.sh (ow_build); the caller sets
# OW_TEST_RECORD to a file (one line per step, tab-separated: the format
# scripts/lib/test_summary.py documents).
#
# ow_build_pass DIR WHAT [cmake args...]   ow_build, its exit status recorded
# ow_ctest_pass DIR [ctest args...]         ctest over DIR with --output-junit
#                                           DIR/Testing/ow-junit.xml, recorded;
#                                           nothing runs where DIR did not build
# ow_record FIELD...                         one line of the record
# ow_summary                                 prints the summary; its exit status
#                                            is scripts/test's

ow_record() { (IFS=$'\t' && printf '%s\n' "$*") >>"$OW_TEST_RECORD"; }

ow_summary() { python3 "$(dirname "${BASH_SOURCE[0]}")/test_summary.py" "$OW_TEST_RECORD"; }

ow_build_pass() {
	local d=$1 what=$2 rc=0
	shift 2
	ow_build "$d" "$@" || rc=$?
	ow_record build "$d" "$what" "$rc"
	return "$rc"
}

ow_ctest_pass() {
	local d=$1 rc=0 junit
	shift
	awk -F'\t' -v d="$d" '$1 == "build" && $2 == d && $4 == "0" { ok = 1 } END { exit !ok }' \
		"$OW_TEST_RECORD" || return 0
	junit=$(cd "$d" && pwd)/Testing/ow-junit.xml
	rm -f "$junit"
	ow_record start "$d"
	ctest --test-dir "$d" --output-junit "$junit" "$@" || rc=$?
	ow_record ctest "$d" "$rc" "$junit"
}
