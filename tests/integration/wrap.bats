#!/usr/bin/env bats
# Wrapped at words, always: every command the walk-through runs (sync, ls
# sets, ls sets -v, keygen, export, check, audit, resolve, smoke with the
# stand-in libcuda, doctor, an unknown option) on a pseudo-terminal 60 and 80
# columns wide (tests/tools/wrapcheck.py).  No line it writes, progress lines
# included, is wider than the screen (unless one word alone is); no progress
# total is cut; and every word the same commands show on a 200-column
# terminal is on the narrow screen whole, so nothing was split or cut.  The
# sample index, served by nginx.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export T=$(mktemp -d)
	ow_serve_fixture_index "$T/srv"
	export CHECK="python3 $OW_SOURCE_DIR/tests/tools/wrapcheck.py"
	export OFFWHEEL_PYTORCH_URL=$OW_HTTPS_URL/whl SSL_CERT_FILE=$OW_CA_FILE
	export OFFWHEEL_LIBCUDA=$(dirname "$OFFWHEEL")/tests/standin/libcuda.so.1 OW_STANDIN_CC=12.0
	walk 200 >"$T/walk200.log" 2>&1 || true
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$T"
}

# The walk-through at W columns in a workspace of its own ($T/wW); each
# command's screen in $T/wW/N.screen, failures counted in $T/wW/failed.
walk() {
	local w=$1 h=$T/w$1 n=0 line
	rm -rf "$h"
	mkdir -p "$h"
	: >"$h/failed"
	while IFS= read -r line; do
		n=$((n + 1))
		echo "== $w columns: offwheel $line"
		# shellcheck disable=SC2086 # the line is split into arguments on purpose
		HOME=$h OFFWHEEL_HOME=$h/ws $CHECK run --cols "$w" --out "$h/$n.screen" -- \
			"$OFFWHEEL" ${line//HOME/$h} || echo "$n offwheel $line" >>"$h/failed"
		sed -i "s|$h|HOME|g" "$h/$n.screen"
	done <<-'EOF'
		sync --channel stable --variant cu126,cu128 --python 3.11,3.12 --platform linux-x86_64,windows-x86_64 --device 12.0
		ls sets
		ls sets -v
		keygen HOME/lab.sec
		export HOME/stick --all-sets --sign HOME/lab.sec
		check HOME/stick --pubkey HOME/lab.pub
		audit --device 12.0 set:1
		audit --device 12.0 set:5
		resolve --offline --channel stable --variant cu126,cu128 --python 3.11,3.12 --platform linux-x86_64,windows-x86_64 --device 12.0
		smoke --python python3
		doctor
		sync --chanel stable
		ls --bogus
	EOF
	echo "== $n commands"
}

# Each command's narrow screen holds every word of its wide one.
same_words() {
	local w=$1 f n bad=0
	for f in "$T"/w200/*.screen; do
		n=$(basename "$f")
		$CHECK words "$f" "$T/w$w/$n" || { echo "  in $n"; bad=1; }
	done
	return $bad
}

@test "the reference run: 13 commands on a 200-column terminal, sync and ls sets work" {
	cat "$T/walk200.log"
	grep -q '== 13 commands' "$T/walk200.log"
	grep -q 'cu128 cp312-manylinux_2_28_x86_64' "$T/w200/2.screen"
	grep -q 'key id' "$T/w200/4.screen"
	grep -q 'valid' "$T/w200/6.screen"
}

@test "60 columns: every line fits, no word split or cut" {
	walk 60
	failed=$(cat "$T/w60/failed")
	same_words 60
	[ -z "$failed" ] || { echo "too wide or cut: $failed"; false; }
}

@test "80 columns: every line fits, no word split or cut" {
	walk 80
	failed=$(cat "$T/w80/failed")
	same_words 80
	[ -z "$failed" ] || { echo "too wide or cut: $failed"; false; }
}

@test "a set's audit shows its progress on the terminal: 'N of M member audits done', never past M" {
	h=$T/w200
	HOME=$h OFFWHEEL_HOME=$h/ws run python3 "$OW_SOURCE_DIR/tests/tools/ptyscreen.py" --cols 80 \
		--raw "$T/audit.raw" -- "$OFFWHEEL" audit --device 12.0 set:1
	echo "$output"
	counts=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$T/audit.raw" | tr '\r' '\n' |
		grep -aoE '[0-9]+ of [0-9]+ member audits done' | sort -u)
	echo "$counts"
	[ -n "$counts" ]
	while read -r k _ m _; do
		[ "$k" -le "$m" ] && [ "$m" -ge 1 ]
	done <<<"$counts"
	# the screen keeps the verdict, not the progress line
	[[ $output != *"member audits done"* ]]
	[[ $output == *"set 1 "* ]]
}
