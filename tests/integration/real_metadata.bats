#!/usr/bin/env bats
# offwheel on a fixture index made from REAL metadata (scripts/real-metadata-index
# build, from tests/fixtures/real-metadata/snapshot.json): torch 2.15.0 and the
# torchvision / torchaudio that go with it, and every file of their closure on
# PyPI, as tiny wheels carrying the real Requires-Dist / Provides-Extra, in the
# PyTorch layout (every project under whl/cu130/, nothing at the channel root).
# Oracles: uv's closure on PyPI when the snapshot was taken (no network
# needed), uv on the fixture index (12 targets), pip (the host target), and a
# real `pip install --no-index --require-hashes` of the exported stick.
# The real torch 2.15.0 asks for cuda-toolkit[cublas,...]==13.2.2 on Linux,
# whose requirements are gated by `extra == '...'` with exact pins: a
# resolver that drops requested extras misses packages on the Linux targets,
# and one that lets them float picks the newest (also in the fixture).
#
# Regenerate the snapshot (network, ~2 min): scripts/real-metadata-index snapshot

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

PYS=3.11,3.12,3.13
PLATS=linux-x86_64,linux-aarch64,windows-x86_64,macosx_14_0_arm64

setup_file() {
	export SRV=$(mktemp -d)
	export SNAP=$OW_SOURCE_DIR/tests/fixtures/real-metadata/snapshot.json
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV" --snapshot "$SNAP" >/dev/null
	export EXP=$SRV/EXPECTED.json
	ow_start_nginx "$SRV/www"
	export OW_HTTP_URL OW_HTTP_PORT OW_HTTPS_URL OW_CA_FILE OW_NGINX_DIR OW_NGINX_LOG
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
	export UVENV="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv"
	# every target in one call; exit 4 (a target incomplete) is judged by the tests
	"$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" \
		--variant cu130 --python "$PYS" --platform "$PLATS" >"$SRV/ow.json" 2>"$SRV/ow.err" || echo $? >"$SRV/ow.rc"
	[ -f "$SRV/ow.rc" ] || echo 0 >"$SRV/ow.rc"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# closure of target NAME (cp311-manylinux_2_28_x86_64) in offwheel's --json FILE
ow_closure() { jq -r --arg t "cu130 $2" '.targets[] | select(.target == $t) | .members[] | "\(.project)==\(.version)"' "$1" | sort; }
ow_has_target() { jq -e --arg t "cu130 $2" '[.targets[] | select(.target == $t)] | length == 1' "$1" >/dev/null; }
exp_closure() { jq -r --arg t "$1" '.targets[$t][]' "$EXP" | sort; }
exp_targets() { jq -r '.targets | keys[]' "$EXP"; }
pins() { jq -r '.sets | to_entries[] | "\(.key)==\(.value)"' "$EXP"; }

# compare offwheel (file $1) with an oracle (function $2 NAME -> closure) for
# every target; prints a diff per disagreeing target and fails naming them
compare_all() {
	local ow=$1 oracle=$2 label=$3 t bad=()
	[ -s "$ow" ] || { echo "offwheel resolve printed nothing (exit $(cat "$SRV/ow.rc")):"; cat "$SRV/ow.err"; return 1; }
	for t in $(exp_targets); do
		if ! ow_has_target "$ow" "$t"; then
			echo "== $t: offwheel has no target 'cu130 $t' (cannot express it with --platform $PLATS?)"
			bad+=("$t")
			continue
		fi
		"$oracle" "$t" >"$BATS_TEST_TMPDIR/want.txt"
		ow_closure "$ow" "$t" >"$BATS_TEST_TMPDIR/got.txt"
		if ! diff -u --label "$label $t" --label "offwheel $t" "$BATS_TEST_TMPDIR/want.txt" \
			"$BATS_TEST_TMPDIR/got.txt" >"$BATS_TEST_TMPDIR/diff.txt"; then
			echo "== $t: $(jq -r --arg t "cu130 $t" '.targets[] | select(.target == $t) | "complete=\(.complete) \(.error // "")"' "$ow")"
			cat "$BATS_TEST_TMPDIR/diff.txt"
			bad+=("$t")
		fi
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "offwheel disagrees with $label on ${#bad[@]} of $(exp_targets | wc -l) targets: ${bad[*]}"; return 1; }
}

need_uv() {
	if [ ! -x "$UVENV/bin/uv" ]; then
		rm -rf "$UVENV"
		{ python3 -m venv "$UVENV" && timeout 180 "$UVENV/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv is not in $UVENV and could not be installed from PyPI (no network?): the uv-on-the-fixture oracle did not run"
	fi
}

uv_fixture() { # target name -> uv's closure on the fixture index (HTTP)
	local t=$1 py plat env=()
	py=$(jq -r --arg t "$t" '.platforms[$t].python' "$EXP")
	plat=$(jq -r --arg t "$t" '.platforms[$t].uv_python_platform' "$EXP")
	[[ $t == *macosx* ]] && mapfile -t env < <(jq -r '.uv_macos_env | to_entries[] | "\(.key)=\(.value)"' "$EXP")
	pins >"$BATS_TEST_TMPDIR/req.in"
	env "${env[@]}" "$UVENV/bin/uv" pip compile -q --no-config --no-cache --no-python-downloads --python-platform "$plat" \
		--python-version "$py" --index-url "$OW_HTTP_URL/whl/cu130" --allow-insecure-host 127.0.0.1 \
		--only-binary :all: --no-header --no-annotate "$BATS_TEST_TMPDIR/req.in" | sort
}

host_target() { # the host's target name if it is one of the 12, else empty
	local py
	py=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
	[ "$(uname -sm)" = "Linux x86_64" ] || return 0
	python3 -c 'import os, sys; v = os.confstr("CS_GNU_LIBC_VERSION").split()[1]; sys.exit(tuple(map(int, v.split(".")[:2])) < (2, 28))' 2>/dev/null || return 0
	jq -e --arg t "$py-manylinux_2_28_x86_64" '.targets | has($t)' "$EXP" >/dev/null && echo "$py-manylinux_2_28_x86_64"
	return 0
}

@test "the snapshot is real metadata: torch 2.15.0 asks cuda-toolkit for extras, cuda-toolkit gates its pins on them" {
	[ "$(jq '.targets | length' "$SNAP")" -eq 12 ]
	[ "$(jq '.files | length' "$SNAP")" -gt 100 ]
	[ "$(jq -r '.sets | "\(.torch) \(.torchvision) \(.torchaudio)"' "$SNAP")" = "2.15.0 0.29.2 2.11.1" ]
	jq -e '.uv_version | startswith("uv ")' "$SNAP" >/dev/null
	meta() { jq -r --arg f "$1" '.files[] | select(.filename == $f) | .metadata["Requires-Dist"][]' "$SNAP"; }
	for py in 311 312 313; do
		for plat in manylinux_2_28_x86_64 manylinux_2_28_aarch64; do
			meta "torch-2.15.0-cp$py-cp$py-$plat.whl" | grep -qxF 'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2; platform_system == "Linux"'
		done
		# macOS and Windows files carry the same lines: the markers alone keep CUDA off there
		for plat in macosx_14_0_arm64 win_amd64; do
			meta "torch-2.15.0-cp$py-cp$py-$plat.whl" >"$BATS_TEST_TMPDIR/m.txt"
			grep -q '^cuda-toolkit\[' "$BATS_TEST_TMPDIR/m.txt"
			[ "$(grep '^nvidia-\|^cuda-\|^triton' "$BATS_TEST_TMPDIR/m.txt" | grep -vc 'platform_system == "Linux"')" -eq 0 ]
		done
	done
	ct=cuda_toolkit-13.2.2-py2.py3-none-any.whl
	meta "$ct" | grep -q "^nvidia-cublas==13\.4\.1\.3\.\*; .*extra == 'cublas'"
	[ "$(meta "$ct" | grep -c "extra == '")" -gt 30 ]
	jq -e --arg f "$ct" '.files[] | select(.filename == $f) | .metadata["Provides-Extra"] | any(.[]; . == "nvjitlink")' "$SNAP" >/dev/null
	# the trap: a newer nvidia-cublas than the extra's pin is in the fixture
	jq -e '[.files[] | select(.project == "nvidia-cublas") | .version] | unique | length > 1' "$SNAP" >/dev/null
	# every closure member has a file, and each Linux closure holds what only the extras bring
	jq -r '[.files[] | "\(.project)==\(.version)"] as $have | .targets | to_entries[] | .key as $t |
		.value.closure[] | select(. as $m | $have | index([$m]) | not) | "\($t): \(.) has no file in the snapshot"' \
		"$SNAP" >"$BATS_TEST_TMPDIR/nofile.txt"
	[ ! -s "$BATS_TEST_TMPDIR/nofile.txt" ] || { cat "$BATS_TEST_TMPDIR/nofile.txt"; false; }
	for t in cp311-manylinux_2_28_x86_64 cp313-manylinux_2_28_aarch64; do
		jq -e --arg t "$t" '.targets[$t].closure | index("nvidia-cublas==13.4.1.3") and index("nvidia-cufile==1.17.1.22")' "$SNAP" >/dev/null
	done
	# the built fixture: PyTorch layout, wheel METADATA == .metadata == the page's hash
	[ -f "$SRV/www/whl/cu130/index.html" ] && [ -f "$SRV/www/whl/cu130/cuda-toolkit/index.html" ]
	[ "$(find "$SRV/www/whl" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ] # only cu130/
	d=$SRV/www/whl/cu130/cuda-toolkit
	unzip -p "$d/$ct" cuda_toolkit-13.2.2.dist-info/METADATA | cmp - "$d/$ct.metadata"
	grep -qF "data-core-metadata=\"sha256=$(sha256sum <"$d/$ct.metadata" | cut -d' ' -f1)\"" "$d/index.html"
	grep -qF "$ct#sha256=$(sha256sum <"$d/$ct" | cut -d' ' -f1)\"" "$d/index.html"
}

@test "offwheel's closure equals uv's on PyPI (the snapshot) for all 12 targets" {
	echo "offwheel resolve exit $(cat "$SRV/ow.rc")"
	compare_all "$SRV/ow.json" exp_closure "uv-on-PyPI"
	[ "$(cat "$SRV/ow.rc")" -eq 0 ]
}

@test "uv on the fixture index agrees with its closure on PyPI and with offwheel, all 12 targets" {
	need_uv
	local t bad=()
	for t in $(exp_targets); do
		uv_fixture "$t" >"$BATS_TEST_TMPDIR/uv-$t.txt"
		[ -s "$BATS_TEST_TMPDIR/uv-$t.txt" ] || { bad+=("$t(uv failed)"); continue; }
		diff -u --label "uv-on-PyPI $t" --label "uv-on-fixture $t" <(exp_closure "$t") \
			"$BATS_TEST_TMPDIR/uv-$t.txt" || bad+=("$t")
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "the fixture misleads uv on: ${bad[*]}"; false; }
	uv_saved() { cat "$BATS_TEST_TMPDIR/uv-$1.txt"; }
	compare_all "$SRV/ow.json" uv_saved "uv-on-fixture"
}

@test "pip (the host) agrees with offwheel on the host's target" {
	python3 -c 'from importlib.metadata import version; import sys; sys.exit(tuple(map(int, version("pip").split(".")[:2])) < (23, 1))' ||
		skip "pip $(python3 -m pip --version | cut -d' ' -f2) is older than 23.1 (misreads PEP 658 Name spellings, pypa/pip#11847); scripts/test provides a current one"
	t=$(host_target)
	[ -n "$t" ] || skip "the host ($(uname -sm), python $(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')) is none of the 12 targets"
	pins >"$BATS_TEST_TMPDIR/req.txt"
	python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
		--report "$BATS_TEST_TMPDIR/pip.json" --index-url "$OW_HTTP_URL/whl/cu130" \
		--trusted-host 127.0.0.1 -r "$BATS_TEST_TMPDIR/req.txt"
	python3 -c '
import json, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
for i in json.load(open(sys.argv[1]))["install"]:
    print(norm(i["metadata"]["name"]) + "==" + i["metadata"]["version"])' "$BATS_TEST_TMPDIR/pip.json" |
		sort >"$BATS_TEST_TMPDIR/pip.txt"
	echo "host target $t"
	diff -u --label "uv-on-PyPI" --label "pip-on-fixture" <(exp_closure "$t") "$BATS_TEST_TMPDIR/pip.txt"
	diff -u --label "pip-on-fixture" --label "offwheel" "$BATS_TEST_TMPDIR/pip.txt" <(ow_closure "$SRV/ow.json" "$t")
}

@test "sync + export of the host's Linux target, then pip install --no-index --require-hashes of the stick" {
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	t=cp${py/./}-manylinux_2_28_x86_64
	jq -e --arg t "$t" '.targets | has($t)' "$EXP" >/dev/null || skip "host python $py is not one of the snapshot's (3.11-3.13)"
	[ "$(uname -m)" = x86_64 ] || skip "pip on $(uname -m) cannot install the manylinux x86_64 wheels"
	ws=$SRV/ws-sync
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json sync --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" \
		--variant cu130 --python "$py" --platform manylinux_2_28_x86_64
	echo "$output" >"$BATS_TEST_TMPDIR/sync.json"
	echo "sync exit $status; $stderr" | tail -5
	[ "$status" -eq 0 ]
	mkdir -p "$SRV/keys"
	"$OFFWHEEL" keygen "$SRV/keys/k.sec" >/dev/null
	"$OFFWHEEL" --home "$ws" -q export "$SRV/stick" --target "cu130 $t" --sign "$SRV/keys/k.sec"
	req=$SRV/stick/requirements/cu130-$t.txt
	[ -f "$req" ]
	# INSTALL.txt's --no-index command, run as written from the stick's root, in a fresh venv
	mapfile -t cmds < <(sed -n 's/^    //p' "$SRV/stick/INSTALL.txt" | grep -E '^pip install --no-index --find-links wheels ')
	[ "${#cmds[@]}" -eq 1 ]
	[[ "${cmds[0]}" == *"--require-hashes -r requirements/cu130-$t.txt"* ]]
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	run bash -c "cd '$SRV/stick' && PATH='$BATS_TEST_TMPDIR/v/bin':\$PATH && ${cmds[0]} -q"
	pip_status=$status
	[ "$pip_status" -eq 0 ] || echo "${cmds[0]} failed ($pip_status): $output"
	# the pinned requirements are the full closure, each with its hash
	sed -n 's/^\([^ #]*==[^ ]*\) .*/\1/p' "$req" |
		python3 -c 'import re, sys; [print(re.sub(r"[-_.]+", "-", n).lower() + "==" + v) for n, v in (l.strip().split("==", 1) for l in sys.stdin)]' |
		sort >"$BATS_TEST_TMPDIR/req.txt"
	diff -u --label "uv-on-PyPI $t" --label "export requirements" <(exp_closure "$t") "$BATS_TEST_TMPDIR/req.txt"
	[ "$pip_status" -eq 0 ]
	"$BATS_TEST_TMPDIR/v/bin/pip" list --format freeze 2>/dev/null >"$BATS_TEST_TMPDIR/installed.txt"
	grep -qx 'torch==2.15.0' "$BATS_TEST_TMPDIR/installed.txt"
	grep -qx 'cuda-toolkit==13.2.2' "$BATS_TEST_TMPDIR/installed.txt"
	grep -qx 'nvidia-cublas==13.4.1.3' "$BATS_TEST_TMPDIR/installed.txt"
	run "$BATS_TEST_TMPDIR/v/bin/pip" check
	[ "$status" -eq 0 ] || { echo "pip check: $output"; false; }
}
