#!/usr/bin/env bats
# scripts/test's closing summary (scripts/lib/passes.sh and
# scripts/lib/test_summary.py) over real ctest runs: a small CMake project
# whose tests pass, fail, skip and cannot run, tested through the same
# ow_build_pass / ow_ctest_pass / ow_summary scripts/test calls.

setup_file() {
	export SRC="${OW_SOURCE_DIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
	export P=$BATS_FILE_TMPDIR/proj
	mkdir -p "$P"
	cat >"$P/CMakeLists.txt" <<-'EOF'
		cmake_minimum_required(VERSION 3.20)
		project(summary_probe NONE)
		enable_testing()
		add_test(NAME t/ok COMMAND true)
		add_test(NAME t/ok2 COMMAND true)
		add_test(NAME t/skips COMMAND sh -c "exit 77")
		set_tests_properties(t/skips PROPERTIES SKIP_RETURN_CODE 77)
		if(PROBE_FAIL)
		  add_test(NAME t/fails COMMAND sh -c "echo 'expected <1> & got 2'; exit 3")
		  add_test(NAME t/missing COMMAND ${CMAKE_BINARY_DIR}/no-such-program)
		endif()
	EOF
}

setup() {
	source "$SRC/scripts/lib/setup.sh"
	source "$SRC/scripts/lib/passes.sh"
	export OW_ROOT=$P # ow_build configures OW_ROOT
	export OW_TEST_RECORD=$BATS_TEST_TMPDIR/record
	: >"$OW_TEST_RECORD"
	cd "$BATS_TEST_TMPDIR"
}

# summary: ow_summary's output in $out (its last lines), status in $st
summary() {
	st=0
	out=$(ow_summary) || st=$?
	printf '%s\n' "$out"
}

@test "one failure in the first pass: FAILED with its name as the last lines, exit 1, even when the last pass passed" {
	ow_build_pass bad "probe, failing" -DPROBE_FAIL=ON
	ow_build_pass good "probe"
	ow_ctest_pass bad >/dev/null
	ow_ctest_pass good >/dev/null
	ow_record skip tsan "OW_TEST_TSAN=1 adds it"
	# ctest's own verdict on each pass, for the record
	[ "$(awk -F'\t' '$1 == "ctest" { print $2 "=" $3 }' "$OW_TEST_RECORD" | paste -sd' ')" = "bad=8 good=0" ]
	summary
	[ "$st" -eq 1 ]
	grep -qx 'bad (probe, failing): 2 passed, 1 skipped, 2 FAILED (.*)' <<<"$out"
	grep -qx '    FAILED t/fails' <<<"$out"
	grep -qx '    FAILED t/missing (not run: Unable to find executable)' <<<"$out"
	grep -qx 'good (probe): 2 passed, 1 skipped (.*)' <<<"$out"
	grep -qx 'tsan: not run (OW_TEST_TSAN=1 adds it)' <<<"$out"
	! grep -q 'FAILED t/ok' <<<"$out"
	[ "$(tail -n1 <<<"$out")" = "FAILED: 2 failed in bad — scripts/test exits 1" ]
}

@test "every pass passed: PASSED, exit 0; ctest's arguments (a label) go through" {
	ow_build_pass good "probe"
	ow_build_pass good2 "probe again"
	ow_ctest_pass good >/dev/null
	ow_ctest_pass good2 -R 'ok$' >/dev/null
	summary
	[ "$st" -eq 0 ]
	grep -qx 'good (probe): 2 passed, 1 skipped (.*)' <<<"$out"
	grep -qx 'good2 (probe again): 1 passed (.*)' <<<"$out"
	[ "$(tail -n1 <<<"$out")" = "PASSED: every build built and every test of every pass passed — scripts/test exits 0" ]
}

@test "a build that fails is named, its tests are not run, exit 1" {
	mkdir -p broken
	ow_build_pass good "probe"
	# a source folder that is no CMake project
	OW_ROOT=$BATS_TEST_TMPDIR/broken ow_build_pass broken "no project" 2>/dev/null && false
	ow_ctest_pass broken
	ow_ctest_pass good >/dev/null
	[ "$(grep -c '^ctest' "$OW_TEST_RECORD")" -eq 1 ]
	summary
	[ "$st" -eq 1 ]
	grep -q '^broken (no project): BUILD FAILED (exit 1; ' <<<"$out"
	[ "$(tail -n1 <<<"$out")" = "FAILED: broken did not build — scripts/test exits 1" ]
}

@test "a ctest that dies without results (killed, crashed) is a failure, not a pass" {
	ow_build_pass good "probe"
	ow_ctest_pass good >/dev/null
	mkdir bin
	printf '#!/bin/sh\nkill -KILL $$\n' >bin/ctest
	chmod +x bin/ctest
	PATH=$PWD/bin:$PATH ow_ctest_pass good
	summary
	[ "$st" -eq 1 ]
	# the junit file of the earlier run is not taken for this one's
	grep -q '^good (probe): NO TEST RESULTS (ctest exited 137; .*ow-junit.xml: No such file or directory)' <<<"$out"
	[ "$(tail -n1 <<<"$out")" = "FAILED: no test results from good — scripts/test exits 1" ]
}

@test "an interrupted run says so and exits 130" {
	ow_build_pass good "probe"
	ow_build_pass good2 "probe again"
	ow_ctest_pass good >/dev/null
	# what scripts/test's INT trap leaves when Ctrl-C lands in a ctest pass
	ow_record start good2
	ow_record interrupted
	summary
	[ "$st" -eq 130 ]
	grep -qx 'good (probe): 2 passed, 1 skipped (.*)' <<<"$out"
	grep -qx 'good2 (probe again): its tests were interrupted' <<<"$out"
	[ "$(tail -n1 <<<"$out")" = "INTERRUPTED: the passes above are all that ran; scripts/test exits 130" ]
}
