#!/usr/bin/env bats
# Progress that tells the truth, and an interrupt that leaves a resumable
# workspace: sync runs on a pseudo-terminal (tests/tools/ptyscreen.py) against
# the sample index served slowly (nginx limit_rate), so the wheels finish one
# after the other (torchaudio's is small, torch's and torchvision's are not).

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	OW_NGINX_LIMIT_RATE=4000 ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTPS_URL OW_HTTPS_URL2 OW_CA_FILE
	export SCREEN="python3 $OW_SOURCE_DIR/tests/tools/ptyscreen.py"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

sync_args() {
	ARGS=(sync --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost
		--variant cu128 --python 3.12 --platform linux-x86_64 --no-deps)
}

# The progress text as drawn: escape sequences removed, one line per CR/LF.
drawn() { sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$1" | tr '\r' '\n'; }

@test "Ctrl-C during a sync: matrix first, honest counts, finished files listed, exit 130, resumable" {
	sync_args
	ws=$SRV/ws-int
	run $SCREEN --cols 80 --raw "$SRV/int.raw" --interrupt-on ' [12] of 3 wheels done' -- \
		"$OFFWHEEL" --home "$ws" "${ARGS[@]}"
	echo "$output"
	[ "$status" -eq 130 ]
	# the count never passes its total, and bytes left are shown
	lines=$(drawn "$SRV/int.raw" | grep -aE ' [0-9]+ of [0-9]+ [^,]* done')
	[ -n "$lines" ]
	while read -r n m; do
		[ "$n" -le "$m" ] || { echo "count $n of $m"; false; }
	done < <(grep -oE '[0-9]+ of [0-9]+ [^,]* done' <<<"$lines" | awk '{print $1, $3}')
	grep -qE '[0-9.]+ [kMG]?B left' <<<"$lines"
	# no ETA of 0 s while bytes are left
	! grep -E 'B left, ETA ~?0 s' <<<"$lines"
	# every progress line drawn fits the 80 columns
	[ "$(drawn "$SRV/int.raw" | grep -aE '% of | done' |
		awk '{ if (length($0) > m) m = length($0) } END { print m }')" -le 80 ]
	# the matrix was on the screen before the first wheel finished
	m=$(drawn "$SRV/int.raw" | grep -anm1 '^TARGET ' | cut -d: -f1)
	d=$(drawn "$SRV/int.raw" | grep -anm1 ' [12] of 3 wheels done' | cut -d: -f1)
	[ -n "$m" ] && [ -n "$d" ] && [ "$m" -lt "$d" ]
	# what the screen keeps: the message, the finished file, no progress line
	grep -qF 'offwheel sync: interrupted — re-run to resume' <<<"$output"
	# a status word and its wheel's name: on one line, or on two when the name
	# (74 columns) does not fit beside it (wrapped at the space, never inside)
	k=$(tr '\n' ' ' <<<"$output" | grep -oE '(^| )done +torch' | wc -l)
	[ "$k" -ge 1 ] && [ "$k" -le 2 ]
	grep -qF "finished before the interrupt ($k of 3, stored and verified):" <<<"$output"
	[[ "$output" != *" wheels done"* ]]
	[[ "$output" != *"% of "* ]]
	# nothing half-written stored; the re-run downloads only the rest
	run "$OFFWHEEL" --home "$ws" fsck
	[ "$status" -eq 0 ]
	# the re-run, on the terminal: its count is of all 3 wheels, the $k stored
	# ones done from the start (not "0 of $((3 - k))", a total that jumps)
	run $SCREEN --cols 80 --raw "$SRV/resume.raw" -- "$OFFWHEEL" --home "$ws" "${ARGS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	tail -n1 <<<"$output" | grep -qE "^3 files: $((3 - k)) downloaded \(.*\), $k already there\$"
	counts=$(drawn "$SRV/resume.raw" | grep -aoE '[0-9]+ of [0-9]+ wheels done' | sort -u)
	echo "$counts"
	[ -n "$counts" ]
	! grep -vE " of 3 wheels done" <<<"$counts"
	grep -qE "^$k of 3 wheels done" <<<"$counts"
}

@test "SIGTERM with stdout to a file: the matrix is in the file, the message on stderr, exit 143" {
	sync_args
	out=$SRV/term.out
	"$OFFWHEEL" --home "$SRV/ws-term" "${ARGS[@]}" >"$out" 2>"$SRV/term.err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q '^TARGET ' "$out" && break
		sleep 0.1
	done
	sleep 0.5
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	cat "$out" "$SRV/term.err"
	[ "$st" -eq 143 ]
	grep -q '^TARGET ' "$out"
	grep -q '^cu128 cp312-manylinux_2_28_x86_64 ' "$out"
	grep -qF 'offwheel sync: interrupted — re-run to resume' "$SRV/term.err"
	run "$OFFWHEEL" --home "$SRV/ws-term" fsck
	[ "$status" -eq 0 ]
}

@test "a fresh sync reports no zero counts and nothing already there" {
	sync_args
	run "$OFFWHEEL" --home "$SRV/ws-fresh" "${ARGS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	tail -n1 <<<"$output" | grep -qE '^3 files: 3 downloaded \(.* in .* s, .*B/s\)$'
	[[ "$output" != *"already there"* ]]
	[[ "$output" != *" 0 B"* ]]
	# nothing to download: no "0 files" line either
	run "$OFFWHEEL" --home "$SRV/ws-fresh" "${ARGS[@]}"
	[ "$status" -eq 0 ]
	[[ "$output" != *"0 files"* ]]
	tail -n1 <<<"$output" | grep -qE '^3 files: none downloaded, 3 already there$'
}
