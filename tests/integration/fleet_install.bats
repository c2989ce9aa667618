#!/usr/bin/env bats
# The stick goes round the lab (docs/fleet.md): each machine installs its own
# set from it (install: check, probe, pick, pip --no-index --require-hashes
# into a fresh venv, smoke, reports/NAME.json back onto the stick), and the
# stick brings back what happened (fleet: the table, --json, --html).  The
# stand-in libcuda plays the four machines of fleet.bats: a 12.0 GPU with
# driver 12.8 (lab-a), an 8.0 GPU with driver 12.6 (lab-b), no driver
# (lab-c), and a 12.0 GPU behind driver 11.8 (lab-d).  pip itself (from the
# venv python3 -m venv makes) is the installer, and the venv's own
# importlib.metadata the oracle of what it installed.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/fleet.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export STANDIN="$OW_BUILD_DIR/tests/standin/libcuda.so.1"
	unset OW_STANDIN_CC OW_STANDIN_DRIVER OW_STANDIN_MODE OW_STANDIN_DEVICES OW_STANDIN_NAME
	export SRV="$BATS_FILE_TMPDIR/srv"
	ow_serve_fixture_index "$SRV"
	# the stick: the four machines probed onto it, the sets made for them, signed
	export STICK="$BATS_FILE_TMPDIR/stick" KEYS="$BATS_FILE_TMPDIR/keys"
	mkdir -p "$STICK/probes" "$KEYS"
	local m
	for m in lab-a lab-b lab-c lab-d; do
		on "$m" probe --name "$m" --python python3 -o "$STICK/probes/$m.json" >/dev/null
	done
	"$OFFWHEEL" keygen "$KEYS/k.sec" >/dev/null
	"$OFFWHEEL" --home "$BATS_FILE_TMPDIR/ws" -q sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cpu,cu126,cu128 \
		--probes "$STICK/probes" >"$BATS_FILE_TMPDIR/sync.out" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/sync.out"; return 1; }
	"$OFFWHEEL" --home "$BATS_FILE_TMPDIR/ws" -q export "$STICK" --all-sets --sign "$KEYS/k.sec" \
		--probes "$STICK/probes" >/dev/null
	# each machine checks with its own rollback state
	export XDG_STATE_HOME="$BATS_FILE_TMPDIR/state"
}

teardown_file() {
	ow_stop_nginx
}

# the venv's own view of what is installed: NAME VERSION of torch, sorted
torch_of() {
	"$1/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))'
}

@test "install on the 12.0 + driver 12.8 machine: the cu128 torch into a fresh venv, smoke passes, the report on the stick" {
	v="$BATS_FILE_TMPDIR/venv-a"
	run on lab-a install "$STICK" --pubkey "$KEYS/k.pub" --name lab-a --venv "$v"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"valid — "* ]]
	[[ $output == *"machines.json names this machine"* ]]
	[[ $output == *"smoke: PASSED"* ]]
	# the oracle: the venv's own metadata, and pip's list
	[[ $(torch_of "$v") == *+cu128 ]]
	"$v/bin/python" -m pip list --format json 2>/dev/null | jq -e '.[] | select(.name == "torchvision")' >/dev/null
	r="$STICK/reports/lab-a.json"
	[ -f "$r" ]
	[ "$(jq -r .format "$r")" = offwheel-report-1 ]
	[ "$(jq -r '.machine, .chosen_by, .set.variant, .install.ok, .smoke.verdict' "$r" | tr '\n' ' ')" = "lab-a name cu128 true passed " ]
	[[ $(jq -r '.installed[] | select(.name == "torch") | .version' "$r") == *+cu128 ]]
	[ "$(jq -r '.installed[] | select(.name == "torch") | .version' "$r")" = "$(torch_of "$v")" ]
	# the driver's answer per library
	[ "$(jq -r '.smoke.driver.version' "$r")" = 12.8 ]
	jq -e '.smoke.devices[0].cc == "12.0" and ([.smoke.devices[0].libraries[] | select(.package == "torch")] | length > 0)' "$r" >/dev/null
	jq -e '[.smoke.devices[0].libraries[].answer] | all(. == "loaded")' "$r" >/dev/null
	# the lab's report is not signed and check still passes
	! grep -q reports/ "$STICK/SHA256SUMS"
	"$OFFWHEEL" check "$STICK" --pubkey "$KEYS/k.pub" >/dev/null
}

@test "install on the machine without a driver: the cpu torch, no smoke; --json is the report" {
	v="$BATS_FILE_TMPDIR/venv-c"
	run --separate-stderr on lab-c --json install "$STICK" --pubkey "$KEYS/k.pub" --name lab-c --venv "$v"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[[ $(torch_of "$v") == *+cpu ]]
	[ "$(jq -r '.command, .smoke.verdict, .set.variant' <<<"$output" | tr '\n' ' ')" = "install no-driver cpu " ]
	[ "$(jq -r .report_file <<<"$output")" = "$STICK/reports/lab-c.json" ]
	# the report file is the document without the run's own keys
	diff <(jq -S 'del(.command, .exit_code, .report_file, .report_error)' <<<"$output") <(jq -S . "$STICK/reports/lab-c.json")
	# and report.schema.json describes it: install's schema is the report's and those keys
	diff <(jq -S '.properties | del(.command, .exit_code, .report_file, .report_error)' "$OW_SOURCE_DIR/docs/json/install.schema.json") \
		<(jq -S .properties "$OW_SOURCE_DIR/docs/json/report.schema.json")
}

@test "install on the 11.8-driver machine is refused with the reason; the refusal is reported too" {
	run on lab-d install "$STICK" --pubkey "$KEYS/k.pub" --name lab-d --venv "$BATS_TEST_TMPDIR/v"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"nothing on this stick fits it"* ]]
	[[ $output == *"cu128: the driver reports CUDA 11.8; cu128 needs 12.8 (NVIDIA driver 570.26 or newer)"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/v" ]
	[ "$(jq -r '.install.ok, .set' "$STICK/reports/lab-d.json" | tr '\n' ' ')" = "false null " ]
	[[ $(jq -r .why "$STICK/reports/lab-d.json") == *570.26* ]]
}

@test "install on a machine machines.json does not name: matched by its probe (8.0 + 12.6 gets cu126)" {
	v="$BATS_TEST_TMPDIR/v"
	run on lab-b install "$STICK" --pubkey "$KEYS/k.pub" --name lab-new --venv "$v"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"matched by its probe"* ]]
	[[ $(torch_of "$v") == *+cu126 ]]
	[ "$(jq -r .chosen_by "$STICK/reports/lab-new.json")" = probe ]
	rm "$STICK/reports/lab-new.json"
	# the same machine by probe behind an 11.8 driver: nothing, and why
	run env OFFWHEEL_LIBCUDA="$STANDIN" OW_STANDIN_CC=8.0 OW_STANDIN_DRIVER=11.8 \
		"$OFFWHEEL" install "$STICK" --pubkey "$KEYS/k.pub" --name lab-new --venv "$BATS_TEST_TMPDIR/v2"
	[ "$status" -eq 3 ]
	[[ $output == *"cu126: the driver reports CUDA 11.8; cu126 needs 12.6"* ]]
	rm -f "$STICK/reports/lab-new.json"
}

@test "install refuses a stick that fails its check, and installs nothing" {
	bad="$BATS_TEST_TMPDIR/bad"
	cp -r "$STICK" "$bad"
	rm -rf "$bad/reports"
	req=$(jq -r '.machines[] | select(.name == "lab-c") | .requirements' "$bad/machines.json")
	echo "evil==1.0" >>"$bad/$req"
	run on lab-c install "$bad" --pubkey "$KEYS/k.pub" --name lab-c --venv "$BATS_TEST_TMPDIR/v"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"NOT valid"* && $output == *"$req"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/v" ]
	[ ! -e "$bad/reports" ]
	# and the usage: a key, and one of --venv / --python
	run "$OFFWHEEL" install "$STICK" --venv "$BATS_TEST_TMPDIR/v"
	[ "$status" -eq 2 ]
	run "$OFFWHEEL" install "$STICK" --pubkey "$KEYS/k.pub"
	[ "$status" -eq 2 ]
}

@test "install where the report cannot be written: installed, and says so" {
	# reports/lab-c.json is a directory: nothing can be renamed onto it (as a
	# read-only stick, but also when the tests run as root)
	ro="$BATS_TEST_TMPDIR/ro"
	cp -r "$STICK" "$ro"
	rm -rf "$ro/reports"
	mkdir -p "$ro/reports/lab-c.json/x"
	run on lab-c install "$ro" --pubkey "$KEYS/k.pub" --name lab-c --venv "$BATS_TEST_TMPDIR/v"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"no report on the stick"*"reports/lab-c.json"* ]]
	[[ $(torch_of "$BATS_TEST_TMPDIR/v") == *+cpu ]]
}

# ---- fleet: the lab as the stick brings it back (after the installs above) ----

@test "fleet: all four machines, what each got, and why the last got nothing" {
	[ -f "$STICK/reports/lab-a.json" ] || skip "needs the install tests before it"
	run "$OFFWHEEL" fleet "$STICK"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -E '^lab-a +12\.0 .* 12\.8 .*cu128 .*installed, smoke passed' <<<"$output"
	grep -E '^lab-b +8\.0 .* 12\.6 .*cu126 .*not installed' <<<"$output"
	grep -E '^lab-c +no GPU +none .*cpu .*installed, smoke no-driver' <<<"$output"
	grep -E '^lab-d +12\.0 .* 11\.8 ' <<<"$output"
	# under lab-d, why: its driver is too old for cu128, and which driver would do
	grep -A2 '^lab-d' <<<"$output" | grep -q "failed: no set on the stick fits it: .*cu128: the driver reports CUDA 11.8; cu128 needs 12.8 (NVIDIA driver 570.26 or newer)"
	[[ $output == *"4 machines: 2 installed, 1 with no set that fits"* ]]
}

@test "fleet --json: one document (docs/json/fleet.schema.json), a row per machine with its steps" {
	[ -f "$STICK/reports/lab-a.json" ] || skip "needs the install tests before it"
	run --separate-stderr "$OFFWHEEL" --json fleet "$STICK"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jq -r '[.machines[].name] | join(" ")' <<<"$output")" = "lab-a lab-b lab-c lab-d" ]
	[ "$(jq -r '.machines[] | select(.name == "lab-a") | [.steps.probed, .steps.set, .steps.installed, .steps.smoke] | join(" ")' <<<"$output")" = "ok ok ok ok" ]
	[ "$(jq -r '.machines[] | select(.name == "lab-c") | .steps.smoke' <<<"$output")" = "n/a" ]
	[ "$(jq -r '.machines[] | select(.name == "lab-b") | [.installed, .steps.installed] | join(" ")' <<<"$output")" = " pending" ]
	[ "$(jq -r '.machines[] | select(.name == "lab-d") | .steps.set' <<<"$output")" = failed ]
	[[ $(jq -r '.machines[] | select(.name == "lab-d") | .why' <<<"$output") == *570.26* ]]
	# the schema check is live in the test suite (cli.bats shows it fails on a difference)
	[ -n "$OFFWHEEL_SCHEMA_DIR" ]
}

# chromium --headless, as Debian packages it (scripts/test installs it; run by
# hand without it, the browser checks skip with a message)
browser() {
	command -v chromium >/dev/null || return 1
	echo chromium
}

dump_dom() { # FILE: the DOM chromium renders from it, the network unreachable
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --host-resolver-rules='MAP * ~NOTFOUND' \
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" --dump-dom "file://$1" 2>/dev/null
}

@test "fleet --html: one self-contained page; chromium renders every machine, and it asks the network for nothing" {
	[ -f "$STICK/reports/lab-a.json" ] || skip "needs the install tests before it"
	page="$BATS_TEST_TMPDIR/lab.html"
	run "$OFFWHEEL" fleet "$STICK" --html "$page"
	[ "$status" -eq 0 ]
	[[ $output == *"written to $page"* ]]
	# nothing that could load anything: no src, href, url(), @import; fetching forbidden
	! grep -Eiq '(src|href|srcset|action|data)=|url\(|@import|<script|<link|<img|<iframe' "$page"
	grep -q "Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'" "$page"
	browser >/dev/null || skip "chromium is not installed (apt-get install chromium): the page was checked without a browser"
	dom=$(dump_dom "$page")
	[ -n "$dom" ]
	for m in lab-a lab-b lab-c lab-d; do
		grep -q "<th scope=\"row\">$m</th>" <<<"$dom" || { echo "not rendered: $m"; false; }
	done
	# green and red steps, and the fix under lab-d's row
	grep -q 'class="step ok"' <<<"$dom"
	grep -q 'class="step failed"' <<<"$dom"
	grep -q '570.26' <<<"$dom"
	# the rendered page holds no URL to fetch either
	! grep -Eio '(src|href)="https?:' <<<"$dom"
}

@test "fleet: a hostile probe and report (markup, ESC bytes) are shown escaped in the terminal, JSON and HTML" {
	[ -f "$STICK/reports/lab-a.json" ] || skip "needs the install tests before it"
	h="$BATS_TEST_TMPDIR/hostile"
	mkdir -p "$h/probes" "$h/reports"
	cp "$STICK/manifest.json" "$STICK/machines.json" "$h/"
	evil=$'<script>alert(1)</script>\e[31mRED\e]0;title\a'
	jq --arg n "$evil" '.name = $n | .gpus[0].name = $n' "$STICK/probes/lab-a.json" >"$h/probes/evil.json"
	jq --arg n "$evil" '.machine = $n | .why = $n | .install.ok = false | .install.error = $n | .set = null' \
		"$STICK/reports/lab-a.json" >"$h/reports/evil.json"
	run "$OFFWHEEL" fleet "$h"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *$'\e'* && $output != *$'\a'* ]]
	[[ $output == *'<script>alert(1)</script>\x1b[31mRED'* ]]
	# JSON: the exact text, as a JSON string
	run --separate-stderr "$OFFWHEEL" --json fleet "$h"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.machines[] | select(.name | startswith("<script>")) | .name' <<<"$output")" = "$evil" ]
	# HTML: no markup of theirs
	"$OFFWHEEL" fleet "$h" --html "$h/lab.html" >/dev/null
	! grep -q '<script' "$h/lab.html"
	! grep -q $'\e' "$h/lab.html"
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;\\x1b\[31mRED' "$h/lab.html"
	browser >/dev/null || skip "chromium is not installed (apt-get install chromium): checked without a browser"
	dom=$(dump_dom "$h/lab.html")
	[[ $dom == *'&lt;script&gt;alert(1)&lt;/script&gt;'* ]]
	! grep -q '<script>alert' <<<"$dom"
}

@test "fleet at 80 columns: each machine's name on its line, the rest under it, wrapped at words" {
	[ -f "$STICK/reports/lab-a.json" ] || skip "needs the install tests before it"
	run python3 "$OW_SOURCE_DIR/tests/tools/ptyscreen.py" --cols 80 -- "$OFFWHEEL" fleet "$STICK"
	echo "$output"
	[ "$status" -eq 0 ]
	while IFS= read -r line; do
		[ "${#line}" -le 80 ] || { echo "wider than 80: $line"; false; }
	done <<<"$output"
	for m in lab-a lab-b lab-c lab-d; do
		grep -qx "$m" <<<"$output" || { echo "no line of its own: $m"; false; }
	done
	flat=$(tr -s ' \n' '  ' <<<"$output")
	[[ $flat == *"set cu128 cp311-"*"installed, smoke passed"* || $flat == *"set cu128 cp3"*"installed, smoke passed"* ]]
	[[ $flat == *"cu128 needs 12.8 (NVIDIA driver 570.26 or newer)"* ]]
}

@test "fleet: usage, and a directory that holds no lab" {
	run "$OFFWHEEL" fleet
	[ "$status" -eq 2 ]
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	run "$OFFWHEEL" fleet "$BATS_TEST_TMPDIR/empty"
	[ "$status" -ne 0 ]
	[[ $output == *"run 'offwheel probe'"* ]]
}
