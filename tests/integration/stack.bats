#!/usr/bin/env bats
# A lab's whole stack (-r, -c, --with) on a small index in the lab's layout
# (tests/tools/mkstack_index.py): torch from a variant root, the rest from a
# PyPI-shaped extra index, served by nginx.  A project pinning an older torch
# selects that torch; the newest of a project goes back when a later
# requirement rules it out; a stack with no solution says why as a chain;
# and pip, given the same requirements and the same two indexes, installs
# the same closure for the host.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	python3 "$OW_SOURCE_DIR/tests/tools/mkstack_index.py" "$SRV/www"
	ow_start_nginx "$SRV/www"
	export OW_HTTP_URL OW_HTTP_PORT OW_NGINX_DIR
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

stack() { # args...: resolve one Linux target, JSON (variant $VARIANT, cu128 unless set)
	"$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/whl" --variant "${VARIANT:-cu128}" \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python 3.11 --platform linux-x86_64 "$@"
}

members() { jq -r '.targets[0].members[] | "\(.project)==\(.version)"' | sort | tr '\n' ' '; }

@test "a project that pins an older torch selects that torch; the newer one is passed over, saying why" {
	printf '%s\n' '# the lab stack' 'vllmx==0.11.0' >"$SRV/req.txt"
	run stack -r "$SRV/req.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].versions.torch' <<<"$output")" = "2.9.0+cu128" ]
	[ "$(members <<<"$output")" = "filelock==3.0 numpy==2.1.0 torch==2.9.0+cu128 vllmx==0.11.0 " ]
	# only torch is a set member: torchvision was not named
	[ "$(jq -c '.projects' <<<"$output")" = '["torch"]' ]
	[ "$(jq -r '.targets[0].skipped[0].torch' <<<"$output")" = "2.10.0+cu128" ]
	[ "$(jq -r '.targets[0].skipped[0].why' <<<"$output")" = "the stack decides first (newest first, in its order) and takes torch 2.9.0+cu128 (required by vllmx 0.11.0)" ]
	# who asked for each: the file and line, or the chain
	[ "$(jq -r '.targets[0].members[] | select(.project == "vllmx") | .role + " " + .required_by' <<<"$output")" = "project $SRV/req.txt:2" ]
	[ "$(jq -r '.targets[0].members[] | select(.project == "numpy") | .required_by' <<<"$output")" = "vllmx 0.11.0" ]
}

@test "a requirement on torch itself chooses among the torches; torchvision only when named, then paired" {
	run stack --with 'torch<2.10'
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].versions.torch' <<<"$output")" = "2.9.0+cu128" ]
	[ "$(jq '.targets[0].skipped | length' <<<"$output")" -eq 0 ]
	run stack --with vllmx --with torchvision
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.projects' <<<"$output")" = '["torch","torchvision"]' ]
	[ "$(jq -r '.targets[0].versions.torchvision' <<<"$output")" = "0.24.0+cu128" ]
}

@test "the newest pick goes back when a later requirement rules it out; constraints limit" {
	printf '%s\n' alpha gamma >"$SRV/ab.txt"
	printf '%s\n' 'numpy<2' >"$SRV/cons.txt"
	run stack -r "$SRV/ab.txt" -c "$SRV/cons.txt" --with vllmx
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(members <<<"$output")" = "alpha==1.0 beta==1.0 filelock==3.0 gamma==1.0 numpy==1.26.4 torch==2.9.0+cu128 vllmx==0.11.0 " ]
}

@test "no solution: exit 4, and the chain a person can follow, in text and JSON" {
	run stack --with transx --with 'tokx>=0.22'
	echo "$output"
	[ "$status" -eq 4 ]
	err=$(jq -r '.targets[0].error' <<<"$output")
	[[ $err == *"no version of transx fits: transx 4.57.0 requires tokx<0.22, but --with requires tokx>=0.22"* ]]
	run "$OFFWHEEL" --home "$SRV/ws" resolve --offline --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --python 3.11 --platform linux-x86_64 \
		--with transx --with 'tokx>=0.22'
	[ "$status" -eq 4 ]
	[[ $output == *"transx 4.56.0 requires tokx<0.21"* ]]
}

@test "--hash pins: a file whose sha256 is not pinned is not taken" {
	good=$(sha256sum "$SRV/www/simple/hashed/hashed-1.0-py3-none-any.whl" | cut -d' ' -f1)
	printf 'hashed==1.0 --hash=sha256:%s\n' "$good" >"$SRV/h-good.txt"
	run stack -r "$SRV/h-good.txt"
	[ "$status" -eq 0 ]
	printf 'hashed==1.0 \\\n    --hash=sha256:%s\n' "$(printf 0%.0s $(seq 64))" >"$SRV/h-bad.txt"
	run stack -r "$SRV/h-bad.txt"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $(jq -r '.targets[0].error' <<<"$output") == *"its sha256 is not among the --hash pins of $SRV/h-bad.txt:1"* ]]
}

@test "what a file cannot say is refused before anything is fetched, naming FILE:LINE" {
	printf 'numpy\n-e ./src\n' >"$SRV/edit.txt"
	run "$OFFWHEEL" --home "$SRV/ws2" resolve -r "$SRV/edit.txt"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *"$SRV/edit.txt:2: editable installs (-e) need the source tree"* ]]
	[ ! -e "$SRV/ws2" ]
	run "$OFFWHEEL" --home "$SRV/ws2" resolve -r "$SRV/nope.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"$SRV/nope.txt: No such file or directory"* ]]
}

@test "pip agrees: the same requirements, the same two indexes, the same closure for the host" {
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	printf '%s\n' 'vllmx' 'alpha' 'gamma' 'torchvision' >"$SRV/pip.txt"
	"$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python "$py" -r "$SRV/pip.txt" | members >"$SRV/ow.txt"
	python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
		--index-url "$OW_HTTP_URL/whl/cu128" --extra-index-url "$OW_HTTP_URL/simple" \
		--trusted-host 127.0.0.1 -r "$SRV/pip.txt" --report "$SRV/pip.json"
	jq -r '.install[] | "\(.metadata.name | ascii_downcase)==\(.metadata.version)"' "$SRV/pip.json" |
		sort | tr '\n' ' ' >"$SRV/pip.txt.out"
	echo "offwheel: $(cat "$SRV/ow.txt")"
	echo "pip:      $(cat "$SRV/pip.txt.out")"
	[ -s "$SRV/ow.txt" ]
	[ "$(cat "$SRV/ow.txt")" = "$(cat "$SRV/pip.txt.out")" ]
}

@test "held back in silence no more: a named project below its newest release says which and why (a dependency with only an sdist), in text and JSON" {
	run stack --with hydrax
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].members[] | select(.project == "hydrax") | .version' <<<"$output")" = 0.11.3 ]
	jq -e '.targets[0].held_back == [{"project": "hydrax", "version": "0.11.3", "newest": "1.3.8",
		"why": "no version of hydrax fits: hydrax 1.3.8 requires antlrx==4.9.*, which has no version for this target; antlrx 4.9.3 meets them, but it has only an sdist (--allow-sdist ships it, and the target builds it at install)",
		"sdist": true}]' <<<"$output"
	run "$OFFWHEEL" --home "$SRV/ws" resolve --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python 3.11 --platform linux-x86_64 --with hydrax
	[[ $output == *"held back: hydrax 0.11.3, not 1.3.8: no version of hydrax fits: hydrax 1.3.8 requires antlrx==4.9.*"*"--allow-sdist"* ]]
	# a newest release that fits is not held back: nothing said
	run stack --with vllmx
	jq -e '.targets[0].held_back == []' <<<"$output"
}


spread() { # home, args...: resolve cp311 and cp312 on Linux x86_64, text unless --json is given
	local home=$1
	shift
	env -u COLUMNS "$OFFWHEEL" --home "$home" "$@" resolve --index-url "$OW_HTTP_URL/whl" \
		--variant cu128 --extra-index-url "$OW_HTTP_URL/simple" \
		--trusted-host "127.0.0.1:$OW_HTTP_PORT" --python 3.11,3.12 --platform linux-x86_64 \
		--with spreadx --with vllmx
}

@test "one stack across the matrix: a named project at two versions is said with why; each target lists the stack's versions, in text, JSON and ls sets -v" {
	ws=$BATS_TEST_TMPDIR/ws
	run spread "$ws" --json
	echo "$output"
	[ "$status" -eq 0 ]
	# the newest spreadx has a cp312 wheel only: cp311 takes 1.0, and the run says so
	jq -e '.spread == [{"project": "spreadx", "versions": [
		{"version": "2.0", "targets": ["cu128 cp312-manylinux_2_28_x86_64"]},
		{"version": "1.0", "targets": ["cu128 cp311-manylinux_2_28_x86_64"]}],
		"why": "spreadx 2.0 has no wheel for cp311-manylinux_2_28_x86_64"}]' <<<"$output"
	# in a pipe: one row per target, the stack's versions at its end, then the summary line
	run spread "$ws"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx 'cu128 cp311-manylinux_2_28_x86_64  2.9.0+cu128  2 deps  spreadx 1.0, vllmx 0.11.0' <<<"$output"
	grep -qx 'cu128 cp312-manylinux_2_28_x86_64  2.9.0+cu128  2 deps  spreadx 2.0, vllmx 0.11.0' <<<"$output"
	grep -qx 'spreadx differs across targets: 2.0 on cp312-manylinux_2_28_x86_64, 1.0 on cp311-manylinux_2_28_x86_64: spreadx 2.0 has no wheel for cp311-manylinux_2_28_x86_64' <<<"$output"
	# vllmx is the same everywhere: nothing said about it
	! grep -q '^vllmx differs' <<<"$output"
	# on a terminal of 80 columns the row would pass 80: the versions go on the line under it
	run python3 "$OW_SOURCE_DIR/tests/tools/ptyscreen.py" --cols 80 -- "$OFFWHEEL" --home "$ws" \
		resolve --offline --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --python 3.11,3.12 --platform linux-x86_64 \
		--with spreadx --with vllmx
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(awk 'length($0) > 80' <<<"$output")" ]
	row=$(grep -n '^cu128 cp311-manylinux_2_28_x86_64  2.9.0+cu128  2 deps$' <<<"$output" | cut -d: -f1)
	[ -n "$row" ]
	[ "$(sed -n "$((row + 1))p" <<<"$output")" = "    spreadx 1.0, vllmx 0.11.0" ]
	flat=$(tr -s ' \n' '  ' <<<"$output")
	[[ $flat == *"spreadx differs across targets: 2.0 on cp312-manylinux_2_28_x86_64, 1.0 on cp311-manylinux_2_28_x86_64: spreadx 2.0 has no wheel for cp311-manylinux_2_28_x86_64"* ]]
	# ls sets -v: under each set, what the stack named and the version it holds
	run "$OFFWHEEL" --home "$ws" ls sets -v
	echo "$output"
	row=$(grep -n ' cu128 cp311-manylinux_2_28_x86_64 ' <<<"$output" | head -n1 | cut -d: -f1)
	[ "$(sed -n "$((row + 1))p" <<<"$output")" = "      spreadx 1.0, vllmx 0.11.0" ]
	# one target: nothing spreads
	run stack --with spreadx
	jq -e '.spread == []' <<<"$output"
	# the newest release's Requires-Python leaves cp311 out: said so
	run "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python 3.11,3.12 --platform linux-x86_64 --with pyonlyx
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.spread[] | [.project, [.versions[].version], .why]' <<<"$output")" = \
		'["pyonlyx",["2.0","1.0"],"pyonlyx 2.0 requires Python >=3.12 (not cp311-manylinux_2_28_x86_64)"]' ]
}

@test "a project no index has (a typo) is the answer: named with the nearest name this run knows, and no torch is walked back for it" {
	: >"$OW_NGINX_LOG"
	run stack --with vllmx --with nmpy
	echo "$output"
	[ "$status" -eq 4 ]
	jq -e '.targets[0].error | startswith("nmpy (required by --with): no such project on the indexes asked — no page at") and endswith("; did you mean numpy?")' <<<"$output"
	# the stack alone told it: no torch's metadata was read to walk back
	[ "$(jq '.targets[0].skipped | length' <<<"$output")" -eq 0 ]
	[ "$(grep -c 'GET /whl/cu128/torch/torch-.*\.metadata' "$OW_NGINX_LOG")" -eq 0 ]
}

# uv from the test cache (tests/integration/real_stacks.bats installs it):
# `uv pip compile --only-binary :all:` on the same index, for the same target.
uv_compile() { # PY REQUIREMENT: uv's error text, or a skip when uv is not there
	local uv="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv/bin/uv"
	[ -x "$uv" ] || return 3
	printf '%s\n' "$2" >"$BATS_TEST_TMPDIR/uv.req"
	"$uv" pip compile -q --no-config --cache-dir "$BATS_TEST_TMPDIR/uv-cache" --no-python-downloads \
		--python-platform x86_64-manylinux_2_28 --python-version "$1" \
		--index-url "$OW_HTTP_URL/simple" --allow-insecure-host 127.0.0.1 --only-binary :all: \
		--no-header --no-annotate "$BATS_TEST_TMPDIR/uv.req" 2>&1 || true
}

# Every `tag` uv's hint names ("Wheels are available for ... on the following
# platforms: `a`, `b`", "... with the following Python ABI tags: ...") and the
# target's tag it names ("(e.g., `cp312`)") is in offwheel's words.
uv_tags_named() { # UV-TEXT OFFWHEEL-TEXT
	local tags t missing=()
	tags=$(grep -oE '`[A-Za-z0-9_.]+`' <<<"$1" | tr -d '`' | sort -u)
	[ -n "$tags" ] || { echo "uv named no tag: $1"; return 1; }
	for t in $tags; do [[ $2 == *"$t"* ]] || missing+=("$t"); done
	echo "uv names: $(echo $tags)"
	[ "${#missing[@]}" -eq 0 ] || { echo "offwheel does not name: ${missing[*]}"; return 1; }
}

@test "a release with wheels only for a newer glibc says so: its tags and the --platform that takes it, as uv names them; in a dependency's conflict too" {
	run stack --with 'glibcx>=1.7'
	echo "$output"
	[ "$status" -eq 4 ]
	err=$(jq -r '.targets[0].error' <<<"$output")
	[[ $err == *"glibcx 1.7.0 meets them, but its wheels are for manylinux_2_31_aarch64, manylinux_2_31_x86_64, not this target's manylinux_2_28_x86_64; --platform manylinux_2_31_x86_64 (a newer glibc than this target's manylinux_2_28) would take it; the newest glibcx with one is 1.6.1"* ]]
	[[ $err != *"none of its"* ]]
	# what it says is true: that --platform takes it
	run "$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python 3.11 --platform manylinux_2_31_x86_64 --with 'glibcx>=1.7'
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].members[] | select(.project == "glibcx") | .version' <<<"$output")" = 1.7.0 ]
	# a dependency's requirement (vllm -> llguidance>=1.7): the held-back release says the same
	run stack --with guidx
	[ "$status" -eq 0 ]
	[[ $(jq -r '.targets[0].held_back[0].why' <<<"$output") == *"guidx 2.0 requires glibcx>=1.7, but only glibcx 1.6.1 is available for this target; glibcx 1.7.0 meets them, but its wheels are for "*"--platform manylinux_2_31_x86_64"* ]]
	uv=$(uv_compile 3.11 'glibcx>=1.7') || skip "uv is not in the test cache (real_stacks.bats installs it): the uv oracle did not run"
	echo "uv: $uv"
	[[ $uv == *"No solution found"* ]]
	uv_tags_named "$uv" "$err"
}

@test "Requires-Python that excludes the target's Python is named (offwheel honours its upper bound, as pip does), with the ABIs the wheels are for, as uv names them" {
	run "$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--python 3.12,3.10 --platform linux-x86_64 --with 'oldpy<2'
	echo "$output"
	[ "$status" -eq 4 ]
	err=$(jq -r '.targets[] | select(.python == "cp312") | .error' <<<"$output")
	[[ $err == *"oldpy 1.0 meets them, but its Requires-Python '>=3.7,<3.11' excludes this target's Python 3.12, and its wheels are for cp39, cp310, not this target's cp312 (--python 3.10 would take it); the newest oldpy with one is 2.0"* ]]
	# and --python 3.10 does
	[ "$(jq -r '.targets[] | select(.python == "cp310") | .members[] | select(.project == "oldpy") | .version' <<<"$output")" = 1.0 ]
	uv=$(uv_compile 3.12 'oldpy<2') || skip "uv is not in the test cache (real_stacks.bats installs it): the uv oracle did not run"
	echo "uv: $uv"
	[[ $uv == *"No solution found"* ]]
	uv_tags_named "$uv" "$err"
}

@test "a stack with no answer shows nothing chosen (not torch missing, not a torch it tried); a cause repeated for each torch is said once" {
	run stack --with transx --with 'tokx>=0.22'
	[ "$status" -eq 4 ]
	jq -e '.targets[0] | .versions.torch == null and .missing == [] and .stack_conflict and .skipped == []' <<<"$output"
	[[ $(jq -r '.targets[0].error' <<<"$output") == "no set fits the stack on this target, whichever torch: no version of transx fits: "* ]]
	# the same conflict as data: its head, and the requirement on tokx each reason failed on
	jq -e '.targets[0].causes | .[0].kind == "no-fit" and .[0].project == "transx" and .[0].depth == 0
		and any(.[]; .kind == "requires" and .project == "tokx" and .reason >= 1 and .by != null)
		and all(.[]; .kind != "no-fit" or .count >= 1)' <<<"$output"
	run "$OFFWHEEL" --home "$SRV/ws" resolve --offline --index-url "$OW_HTTP_URL/whl" --variant cu128 \
		--extra-index-url "$OW_HTTP_URL/simple" --python 3.11 --platform linux-x86_64 \
		--with transx --with 'tokx>=0.22'
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"cu128 cp311-manylinux_2_28_x86_64  -  "*"INCOMPLETE"* ]]
	[[ $output != *"missing"* ]]
	# every torch of cu126 needs filelock, and the stack limits it below any: torch is
	# part of it; after the eighth torch none more is tried, and none is shown
	printf 'filelock<2\n' >"$SRV/fl2.txt"
	VARIANT=cu126 run stack -c "$SRV/fl2.txt" --with numpy
	echo "$output"
	[ "$status" -eq 4 ]
	jq -e '.targets[0] | .versions.torch == null and .missing == [] and .stack_conflict' <<<"$output"
	[[ $(jq -r '.targets[0].error' <<<"$output") == "the stack fits none of the 8 torch releases tried on this target (the newest first; older ones were not tried); with torch 2.11.0+cu126: "*"torch 2.11.0+cu126 requires filelock>=3, but $SRV/fl2.txt:1 limits filelock<2 (the same for torch 2.10.0+cu126, 2.9.0+cu126, 2.8.0+cu126)" ]]
	# torch 2.8.0 and newer need filelock>=3: four passed over for one reason, said once
	printf 'filelock<3\n' >"$SRV/fl3.txt"
	VARIANT=cu126 run stack -c "$SRV/fl3.txt" --with numpy
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].versions.torch' <<<"$output")" = 2.7.0+cu126 ]
	[ "$(jq '.targets[0].skipped | length' <<<"$output")" -eq 4 ]
	run "$OFFWHEEL" --home "$SRV/ws" resolve --offline --index-url "$OW_HTTP_URL/whl" --variant cu126 \
		--extra-index-url "$OW_HTTP_URL/simple" --python 3.11 --platform linux-x86_64 \
		-c "$SRV/fl3.txt" --with numpy
	echo "$output"
	[ "$(grep -c 'passed over' <<<"$output")" -eq 1 ]
	[[ $output == *"newer torch 2.11.0+cu126 passed over: "*"(the same for torch 2.10.0+cu126, 2.9.0+cu126, 2.8.0+cu126)"* ]]
}
