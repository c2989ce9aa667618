#!/usr/bin/env bats
# pip requirement files as offwheel reads them (src/index/reqfile.c), compared
# with pip's own parser, the code `pip install -r` runs
# (tests/tools/reqfile_oracle.py): names, extras, specifiers, constraints,
# --hash values, file and line, and every marker evaluated by pip's packaging
# for four targets.  Then the inputs pip refuses too, and the ones offwheel
# refuses where pip would build or reach elsewhere, each with its file:line.

setup() {
	OWREQ=$OW_BUILD_DIR/tests/owreqfile
	ORACLE="python3 $OW_SOURCE_DIR/tests/tools/reqfile_oracle.py $OWREQ"
	python3 -c 'import pip._internal.req.req_file' 2>/dev/null ||
		skip "pip is not importable by python3: the oracle is missing"
	D=$BATS_TEST_TMPDIR
}

@test "a lab's stack, written every way pip reads: offwheel reads what pip reads" {
	export OW_REQ_TEST_PIN='<5'
	run $ORACLE "$OW_SOURCE_DIR/tests/fixtures/reqfiles/stack.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"16 requirement lines compared with pip's parser, 0 differences"* ]]
	# the run options the files carry
	run "$OWREQ" "$OW_SOURCE_DIR/tests/fixtures/reqfiles/stack.txt"
	[[ ${lines[-1]} == *'"extra_index_urls": ["https://pypi.org/simple"]'*'"pre": true'* ]]
}

@test "constraints given on their own (-c) and requirements after them" {
	run $ORACLE -c "$OW_SOURCE_DIR/tests/fixtures/reqfiles/constraints.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"3 requirement lines compared with pip's parser, 0 differences"* ]]
}

@test "what pip refuses, offwheel refuses, naming the file and line" {
	printf 'numpy\nscipy>=1 numpy\n' >"$D/bad-spec.txt"
	printf 'numpy --frobnicate\n' >"$D/bad-opt.txt"
	printf -- '--hash=md5:00\n' >"$D/bad-hash-alone.txt"
	printf 'numpy --hash=sha256:abc\n' >"$D/bad-hash.txt"
	printf -- '-r missing.txt\n' >"$D/missing.txt.in"
	cp "$D/missing.txt.in" "$D/bad-include.txt"
	for f in bad-spec bad-opt bad-include; do
		run $ORACLE "$D/$f.txt"
		echo "$output"
		[ "$status" -eq 0 ] # both refused it
		grep -q "^offwheel: owreqfile: $D/$f.txt" <<<"$output"
		grep -Eq "^pip: +[A-Za-z]+(Error|Requirement|Exit)" <<<"$output"
	done
	run "$OWREQ" "$D/bad-spec.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"bad-spec.txt:2: "*"scipy>=1 numpy"* ]]
	# a digest of the wrong length can never match: pip finds out when it
	# installs, offwheel when it reads the file
	run "$OWREQ" "$D/bad-hash.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"bad-hash.txt:1: --hash must be sha256:, sha384: or sha512:"* ]]
}

@test "what only offwheel refuses: builds, paths, URLs, other sources — each says what to do" {
	check() { # FILE-CONTENT EXPECTED-TEXT
		printf '%s\n' "numpy" "$1" >"$D/r.txt"
		run "$OWREQ" "$D/r.txt"
		echo "$output"
		[ "$status" -eq 1 ]
		[[ $output == *"r.txt:2: $2"* ]]
	}
	check '-e .' "editable installs (-e) need the source tree"
	check '--editable=git+https://x/y#egg=y' "editable installs (-e)"
	check './wheels/torch-2.9.0-cp312-cp312-linux_x86_64.whl' "a path or URL is not a requirement offwheel can resolve"
	check 'torch-2.9.0-cp312-cp312-linux_x86_64.whl' "a path or URL is not a requirement"
	check 'https://example.org/x-1.0.tar.gz' "a path or URL is not a requirement"
	check 'x @ https://example.org/x-1.0-py3-none-any.whl' "a direct URL (name @ URL) cannot be resolved"
	check '--no-binary :all:' "--no-binary asks for building from source"
	check '-f ./wheels' "-f/--find-links is not supported"
}

@test "includes: relative to the including file, loops and depth are errors, not hangs" {
	mkdir -p "$D/a/b"
	printf -- '-r b/two.txt\nnumpy\n' >"$D/a/one.txt"
	printf -- '-r ../one.txt\n' >"$D/a/b/two.txt"
	run timeout 20 "$OWREQ" "$D/a/one.txt"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"includes itself"* ]]
	# a chain deeper than 16 files
	for i in $(seq 0 20); do printf -- '-r f%d.txt\n' $((i + 1)) >"$D/f$i.txt"; done
	printf 'numpy\n' >"$D/f21.txt"
	run timeout 20 "$OWREQ" "$D/f0.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"nested too deep"* ]]
	# a NUL byte: not a text file
	printf 'numpy\n\0scipy\n' >"$D/nul.txt"
	run "$OWREQ" "$D/nul.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"nul.txt:2: a NUL byte"* ]]
}
