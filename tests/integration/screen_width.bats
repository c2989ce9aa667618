#!/usr/bin/env bats
# At 80 columns the matrix fits: on a terminal narrower than the table, the
# torchvision and torchaudio versions stack under torch's, the lines under a
# row and the summary wrap at spaces; in a pipe (no $COLUMNS) every target
# stays one greppable row.  The sample index, served by nginx.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	ow_serve_fixture_index "$SRV"
	export SCREEN="python3 $OW_SOURCE_DIR/tests/tools/ptyscreen.py"
	# the nightly matrix of two variants, two pythons, two platforms
	"$OFFWHEEL" --home "$SRV/ws" resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cu126,cu128 --python 3.11,3.12 \
		--platform linux-x86_64,windows-x86_64 >/dev/null
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

matrix() { "$OFFWHEEL" --home "$SRV/ws" resolve --offline --index-url "$OW_HTTPS_URL/whl/nightly" \
	--variant cu126,cu128 --python 3.11,3.12 --platform linux-x86_64,windows-x86_64 "$@"; }

@test "resolve at 80 columns: every line fits, versions stacked, nothing cut" {
	run $SCREEN --cols 80 -- bash -c "$(declare -f matrix); OFFWHEEL=$OFFWHEEL SRV=$SRV OW_HTTPS_URL=$OW_HTTPS_URL matrix"
	echo "$output"
	[ "$status" -eq 0 ]
	while IFS= read -r line; do
		[ "${#line}" -le 80 ] || { echo "wider than 80: $line"; false; }
	done <<<"$output"
	grep -q '^TARGET  *torch / torchvision / torchaudio$' <<<"$output"
	# each target's row, then its torchvision and torchaudio versions under torch's
	row=$(grep -n '^cu128 cp311-manylinux_2_28_x86_64 ' <<<"$output" | cut -d: -f1)
	[ -n "$row" ]
	[[ $(sed -n "${row}p" <<<"$output") == *"2.10.0.dev20251021+cu128  15 deps" ]]
	[[ $(sed -n "$((row + 1))p" <<<"$output") =~ ^\ {30,}0\.25\.0\.dev20251022\+cu128$ ]]
	[[ $(sed -n "$((row + 2))p" <<<"$output") =~ ^\ {30,}2\.10\.0\.dev20251021\+cu128$ ]]
	[ "$(grep -c '^cu12[68] cp31[12]-' <<<"$output")" -eq 8 ]
	# the summary, wrapped at a space: both halves are there
	flat=$(tr -s ' \n' '  ' <<<"$output")
	[[ $flat == *"(latest): 8 target(s), 8 complete, 0 incomplete"* ]]
}

@test "resolve in a pipe: one row per target, as wide as it needs" {
	run matrix
	[ "$status" -eq 0 ]
	[ "$(grep -c '^cu12[68] cp31[12]-.*+cu12[68]  .*+cu12[68]  .*+cu12[68]  [0-9]* deps$' <<<"$output")" -eq 8 ]
	grep -q '^TARGET  *torch  *torchvision  *torchaudio *$' <<<"$output"
}
