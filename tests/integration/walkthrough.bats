#!/usr/bin/env bats
# The README's walk-through, run as written: its commands are read from
# README.md (tests/tools/readme_block.py) and run as one shell script from the
# repository root, so the README cannot drift from what works.  The only
# changes: HOME is a temporary directory (the stick, the keys and the
# workspace land there), <target> is this host's target, and `scripts/demo
# --serve` is told (OFFWHEEL_DEMO_BIN, OFFWHEEL_DEMO_DIR) to use the binary
# under test instead of building one, and to keep its server in the test's
# directory.  The GPU is the stand-in driver with compute capability 12.0,
# which `scripts/demo --serve` names on a machine without an NVIDIA driver.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export T=$(mktemp -d)
	export OFFWHEEL_DEMO_DIR=$T/serve OFFWHEEL_DEMO_BIN=$(dirname "$OFFWHEEL")
}

teardown_file() {
	"$OW_SOURCE_DIR/scripts/demo" --stop || true
	rm -rf "$T"
}

@test "the README walk-through works as written" {
	cmds=$(python3 "$OW_SOURCE_DIR/tests/tools/readme_block.py" "$OW_SOURCE_DIR/README.md" "A walk through")
	[ "$(grep -c . <<<"$cmds")" -ge 8 ]
	[[ $cmds == 'eval "$(scripts/demo --serve)"'* ]]
	py=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
	target="cu128-$py-manylinux_2_28_$(uname -m)"
	script=${cmds//<target>/$target}
	if ! command -v signify-openbsd >/dev/null; then
		script=$(grep -v signify-openbsd <<<"$script")
	fi
	cd "$OW_SOURCE_DIR"
	run env -u XDG_CACHE_HOME -u OFFWHEEL_HOME -u SSL_CERT_FILE HOME="$T" \
		PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null \
		bash -c "set -euxo pipefail; $script"
	echo "$output"
	[ "$status" -eq 0 ]
	# what the walk-through did, checked from outside: the stick verifies with
	# the stock tool, the target's venv holds the set the stick was made for
	(cd "$T/stick" && sha256sum -c --quiet SHA256SUMS)
	[ -f "$T/stick/requirements/$target.txt" ]
	run "$T/lab/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.__version__)'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *+cu128 ]]
	# the walk-through ends by stopping the server it started
	[ ! -f "$T/serve/nginx.env" ]
	# its sets are in its own workspace, not in the default one a lab's go to
	[ -f "$T/serve/workspace/index.db" ]
	[ ! -e "$T/.cache/offwheel" ]
	run "$OFFWHEEL" --home "$T/serve/workspace" --json ls sets
	[ "$(jq '.count' <<<"$output")" -ge 4 ]
}
