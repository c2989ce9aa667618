#!/usr/bin/env bats
# What a terminal shows at the end: sync and fetch run on a pseudo-terminal
# (tests/tools/ptyscreen.py replays the bytes on a terminal model) against the
# sample index served slowly (nginx limit_rate), so progress lines are drawn
# while the transfers run.  Progress must be gone at the end and must never
# have erased a line it did not draw.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	OW_NGINX_LIMIT_RATE=8000 ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTPS_URL OW_HTTPS_URL2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR
	export SCREEN="python3 $OW_SOURCE_DIR/tests/tools/ptyscreen.py"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

IDX=(--index-url "" --cert "" --allow-host r2.localhost)
idx() { IDX=(--index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost); }

@test "sync on a terminal: the matrix and the summary stay, the progress lines go" {
	idx
	run $SCREEN --cols 250 --raw "$SRV/sync.raw" -- "$OFFWHEEL" --home "$SRV/ws" sync "${IDX[@]}" \
		--variant cu128 --python 3.12 --platform linux-x86_64 --no-deps
	echo "$output"
	[ "$status" -eq 0 ]
	# progress was drawn (the rate limit kept the transfers on screen) ...
	grep -q $'\e\[1A' "$SRV/sync.raw"
	grep -q ' done, ' "$SRV/sync.raw"
	# ... and is gone; what the command printed is all there, in order
	[[ "$output" != *" done, "* ]]
	[[ "$output" != *"% of "* ]]
	[ "$(grep -c '^TARGET ' <<<"$output")" -eq 1 ]
	grep -q '^cu128 cp312-manylinux_2_28_x86_64 ' <<<"$output"
	[ "$(tail -n1 <<<"$output" | grep -cE '^3 files: 3 downloaded \(.* in .* s, .*B/s\)$')" -eq 1 ]
	for p in torch torchvision torchaudio; do
		[ "$(grep -c "^done  *$p-" <<<"$output")" -eq 1 ]
	done
}

@test "fetch with a failure on a terminal: the failed line and the summary stay" {
	idx
	ws=$SRV/ws-fail
	"$OFFWHEEL" --home "$ws" crawl "${IDX[@]}" --variant cu128 --project torchvision,torchaudio >/dev/null
	f=$("$OFFWHEEL" --home "$ws" --json ls files --project torchaudio --variant cu128 --platform 'manylinux*x86_64' | jq -r '.files[0].filename')
	g=$("$OFFWHEEL" --home "$ws" --json ls files --project torchvision --variant cu128 --platform 'manylinux*x86_64' | jq -r '.files[0].filename')
	# damage one file on the server: its published hash no longer matches
	p=$(find "$SRV/www" "$SRV/www2" -name "$f" | head -1)
	printf 'X' | dd of="$p" bs=1 seek=100 conv=notrunc 2>/dev/null
	run $SCREEN --cols 250 --raw "$SRV/fetch.raw" -- "$OFFWHEEL" --home "$ws" fetch "${IDX[@]}" "$f" "$g"
	echo "$output"
	[ "$status" -eq 3 ]
	grep -q ' done, ' "$SRV/fetch.raw"
	[[ "$output" != *" done, "* ]]
	grep -qF "rejected $f: " <<<"$output"
	grep -qF "done     $g " <<<"$output"
	tail -n1 <<<"$output" | grep -qE '^2 files: 1 downloaded .*, 1 rejected$'
}

@test "long names keep distribution and version whole; the tags give way" {
	idx
	run $SCREEN --cols 72 --raw "$SRV/narrow.raw" -- "$OFFWHEEL" --home "$SRV/ws-narrow" sync "${IDX[@]}" \
		--variant cu128 --python 3.12 --platform linux-x86_64 --no-deps --progress=always
	[ "$status" -eq 0 ]
	# progress lines of wheels: name and version whole, a tag kept, never "...", within 72 columns
	lines=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$SRV/narrow.raw" | tr '\r' '\n' | grep -a '^  torch.*% of ')
	echo "$lines"
	line=$(grep -aE '^  torch-2\.10\.0\.dev20251021\+cu128-(cp312|manylinux)' <<<"$lines" | head -1)
	[ -n "$line" ]
	[[ "$lines" != *...* ]]
	[ "${#line}" -le 72 ]
	# at 60 columns fewer tags, the version still whole
	run $SCREEN --cols 60 --raw "$SRV/narrow60.raw" -- "$OFFWHEEL" --home "$SRV/ws-narrow60" sync \
		"${IDX[@]}" --variant cu128 --python 3.12 --platform linux-x86_64 --no-deps --progress=always
	[ "$status" -eq 0 ]
	line=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$SRV/narrow60.raw" | tr '\r' '\n' |
		grep -aE '^  torch-2\.10\.0\.dev20251021\+cu128[- ].*% of ' | head -1)
	echo "$line"
	[ -n "$line" ]
	[[ "$line" != *...* ]]
	[ "${#line}" -le 60 ]
}

@test "long messages are wrapped to the terminal at spaces, never cut, and stay one line in a pipe" {
	export OFFWHEEL_LIBCUDA=$SRV/no-such/libcuda.so.1
	run --separate-stderr "$OFFWHEEL" smoke --python python3
	[ "$status" -eq 5 ]
	piped=$(grep '^offwheel smoke: ' <<<"$stderr")
	[ "${#piped}" -gt 200 ] # one long line in a pipe
	run $SCREEN --cols 70 -- "$OFFWHEEL" smoke --python python3
	[ "$status" -eq 5 ]
	echo "$output"
	while IFS= read -r l; do
		[ "${#l}" -le 70 ] || { echo "too wide: $l"; false; }
	done <<<"$output"
	# the wrapped message, joined again, is the piped one word for word
	joined=$(sed -n '/^offwheel smoke: /,$p' <<<"$output" | sed 's/^    //' | tr '\n' ' ' | sed 's/ $//')
	[ "$joined" = "$piped" ]
}
