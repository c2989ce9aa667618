#!/usr/bin/env bats
# One signing key, several sticks, several workspaces: every export has a
# name (signed in manifest.json), targets keep the accepted sequence per key
# and name, and sequences follow the clock (max(previous + 1, now)), so
# independent workspaces sharing a key stay in order.  Real exports of the
# sample index's host cpu set, checked by offwheel check with one shared
# state file and by the stock pair (signify-openbsd, sha256sum);
# docs/export-format.md ("Sequence, expiry, rollback") is the rule.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export WS=$SRV/ws KEYS=$SRV/keys
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --project torch,torchvision,torchaudio
	"$OFFWHEEL" --home "$WS" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" "${net[@]}" \
		--variant cpu --python 3.11 >"$SRV/resolve.json"
	export TARGET=$(jq -r '.targets[0].target' "$SRV/resolve.json")
	mapfile -t files < <(jq -r '.targets[0].members[].filename' "$SRV/resolve.json")
	"$OFFWHEEL" --home "$WS" -q fetch "${net[@]}" "${files[@]}"
	ow_stop_nginx
	mkdir -p "$KEYS"
	export KID=$("$OFFWHEEL" --json keygen "$KEYS/k.sec" | jq -r .key_id)
}

teardown_file() {
	rm -rf "$SRV"
}

# A second, independent workspace signing with the same key: the same store,
# none of the first one's export records.
new_ws() {
	local ws=$BATS_TEST_TMPDIR/ws-$1
	cp -a "$WS" "$ws"
	sqlite3 "$ws/index.db" "DELETE FROM exports"
	echo "$ws"
}

# exp WS DIR [args]: export the target from workspace WS into DIR, signed
exp() {
	local ws=$1 d=$2
	shift 2
	timeout 60 "$OFFWHEEL" --home "$ws" -q export "$d" --target "$TARGET" --sign "$KEYS/k.sec" "$@"
}

# chk DIR [args]: offwheel check with the test's one shared state file
chk() {
	local d=$1
	shift
	timeout 60 "$OFFWHEEL" check "$d" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json" "$@"
}

# every stick given checks valid, with offwheel and with the stock pair
all_valid() {
	local d
	for d in "$@"; do
		run chk "$d"
		[ "$status" -eq 0 ] || { echo "$d: $output"; false; }
		if command -v signify-openbsd >/dev/null; then
			(cd "$d" && signify-openbsd -V -q -p "$KEYS/k.pub" -m SHA256SUMS &&
				sha256sum -c --quiet SHA256SUMS) || { echo "$d: the stock check failed"; false; }
		fi
	done
}

seq_of() { jq .sequence "$1/manifest.json"; }

resign() {
	local d=$1
	(cd "$d" && find . -type f ! -name SHA256SUMS ! -name SHA256SUMS.sig -printf '%P\n' | sort |
		xargs -d '\n' sha256sum >SHA256SUMS)
	rm -f "$d/SHA256SUMS.sig"
	signify-openbsd -S -s "$KEYS/k.sec" -m "$d/SHA256SUMS" -x "$d/SHA256SUMS.sig"
}

@test "one key, two workspaces, three sticks exported in turn: every current stick valid with one state; an old copy is a rollback naming it" {
	T=$BATS_TEST_TMPDIR
	ws1=$WS ws2=$(new_ws 2)
	exp "$ws1" "$T/A"
	all_valid "$T/A"
	exp "$ws2" "$T/B"
	all_valid "$T/A" "$T/B"
	exp "$ws1" "$T/C"
	all_valid "$T/A" "$T/B" "$T/C"
	cp -a "$T/A" "$T/A-old" # a copy of stick A as it was
	exp "$ws2" "$T/A"       # the other workspace, the same stick
	[ "$(seq_of "$T/A")" -gt "$(seq_of "$T/A-old")" ]
	all_valid "$T/A" "$T/B" "$T/C"
	exp "$ws1" "$T/B"
	exp "$ws2" "$T/C"
	all_valid "$T/A" "$T/B" "$T/C"
	# stick A mounted elsewhere keeps its name (the one its signed manifest has)
	mkdir -p "$T/media" && mv "$T/A" "$T/media/usb"
	exp "$ws1" "$T/media/usb"
	[ "$(jq -r .name "$T/media/usb/manifest.json")" = A ]
	all_valid "$T/media/usb" "$T/B" "$T/C"
	for n in A B C; do
		[ "$(jq -r --arg k "$KID" --arg n "$n" '.names[$k][$n].sequence' "$T/state.json")" -gt 0 ]
	done
	# the old copy of A: refused, naming the stick and both sequences
	old=$(seq_of "$T/A-old") new=$(seq_of "$T/media/usb")
	run chk "$T/A-old"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"rollback"*"'A': sequence $old is older than sequence $new already accepted for 'A' with key $KID"* ]]
	run chk "$T/A-old" --json
	[ "$status" -eq 3 ]
	[ "$(jq -r .name <<<"$output")" = A ]
	[ "$(jq .accepted_before <<<"$output")" -eq "$new" ]
	[ "$(jq -r '.problems[0].kind' <<<"$output")" = rollback ]
	# the current sticks are still fine after the refusal
	all_valid "$T/media/usb" "$T/B" "$T/C"
}

@test "--name: signed in the manifest, shown by check (text and JSON); default DIR's last component; bad names refused before anything changes" {
	T=$BATS_TEST_TMPDIR
	exp "$WS" "$T/stick" --name "lab torch 2.6"
	[ "$(jq -r .name "$T/stick/manifest.json")" = "lab torch 2.6" ]
	[[ "$(jq -r .comment "$T/stick/manifest.json")" == *"'lab torch 2.6'"* ]]
	run chk "$T/stick"
	[ "$status" -eq 0 ]
	[[ "$output" == *"valid — 'lab torch 2.6', "* ]]
	run chk "$T/stick" --json
	[ "$(jq -r .name <<<"$output")" = "lab torch 2.6" ]
	[ "$(jq '.warnings | length' <<<"$output")" -eq 0 ]
	# the default is the stick's own name; --name renames it (a new stick to targets)
	run timeout 60 "$OFFWHEEL" --home "$WS" --json export "$T/stick" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$(jq -r .name <<<"$output")" = "lab torch 2.6" ]
	exp "$WS" "$T/stick" --name renamed
	[ "$(jq -r .name "$T/stick/manifest.json")" = renamed ]
	run timeout 60 "$OFFWHEEL" --home "$WS" --json export "$T/fresh" --target "$TARGET" --sign "$KEYS/k.sec"
	[ "$(jq -r .name <<<"$output")" = fresh ]
	# refused with exit 2, naming the cause; nothing made
	long=$(printf 'x%.0s' {1..65})
	for bad in "" $'tab\there' "$long" " lead" "trail " "$(printf 'caf\xc3\xa9')"; do
		run timeout 60 "$OFFWHEEL" --home "$WS" export "$T/never" --target "$TARGET" --name "$bad"
		echo "'$bad': $output"
		[ "$status" -eq 2 ]
		[[ "$output" == *"--name"*"not an export name"* ]]
		[ ! -e "$T/never" ]
	done
	run timeout 60 "$OFFWHEEL" --home "$WS" export "$T/never" --target "$TARGET" --name ""
	[[ "$output" == *"it is empty"* ]]
	# a directory whose name is no export name: refused, saying to give --name
	d=$T/$(printf '\xc3\x9cbung')
	run timeout 60 "$OFFWHEEL" --home "$WS" export "$d" --target "$TARGET" --sign "$KEYS/k.sec"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"give --name NAME"* ]]
	[ ! -e "$d" ]
	exp "$WS" "$d" --name uebung
	run chk "$d"
	[ "$status" -eq 0 ]
}

@test "sequence: at least the time, above what the workspace and the stick know; a clock behind still goes up; far ahead warns at check" {
	T=$BATS_TEST_TMPDIR
	before=$(date +%s)
	exp "$WS" "$T/S"
	after=$(date +%s)
	s1=$(seq_of "$T/S")
	[ "$s1" -ge "$before" ] && [ "$s1" -le "$after" ]
	# sticks ahead of this clock (as from a workspace whose clock is ahead): previous + 1
	ahead=$((after + 3 * 86400 + 3600)) # 3 days and an hour: "3 days ahead" for the hour the test may take
	exp "$WS" "$T/S" --sequence "$ahead"
	exp "$WS" "$T/S"
	[ "$(seq_of "$T/S")" -eq $((ahead + 1)) ]
	# another workspace on the same stick: the stick's signed sequence counts
	ws2=$(new_ws 2)
	exp "$ws2" "$T/S"
	[ "$(seq_of "$T/S")" -eq $((ahead + 2)) ]
	# and this workspace's record counts for the name on another stick too
	exp "$WS" "$T/other/S"
	[ "$(seq_of "$T/other/S")" -eq $((ahead + 2)) ]
	# --sequence must be above every sequence known, naming the smallest allowed
	run timeout 60 "$OFFWHEEL" --home "$ws2" export "$T/S" --target "$TARGET" --sign "$KEYS/k.sec" --sequence "$ahead"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--sequence $ahead: not above $((ahead + 2))"*"for 'S'"*"give $((ahead + 3)) or more"* ]]
	# check: valid, with a warning that it is days ahead of the clock
	run chk "$T/S"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: "*"sequence $((ahead + 2)) is 3 days ahead"*"--sequence $((ahead + 3))"* ]]
	run chk "$T/S" --json
	[ "$status" -eq 0 ]
	[ "$(jq -r '.warnings[0].kind' <<<"$output")" = ahead ]
	# as of three days later, no warning
	run chk "$T/S" --at $((ahead + 10))
	[ "$status" -eq 0 ]
	[[ "$output" != *warning* ]]
}

@test "an accepted.json of the per-key format is still read: a floor for every name; exports without a name keep the per-key rule" {
	T=$BATS_TEST_TMPDIR
	exp "$WS" "$T/N"
	now=$(date +%s)
	# a state written before exports had names
	printf '{"keys": {"%s": {"sequence": 5, "accepted_at": %s}}}\n' "$KID" "$now" >"$T/state.json"
	run chk "$T/N"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .keys[\"$KID\"].sequence "$T/state.json")" -eq 5 ] # the per-key entry stays as it was
	[ "$(jq .names[\"$KID\"].N.sequence "$T/state.json")" -eq "$(seq_of "$T/N")" ]
	# an export without a name (an older stick): one sequence per key, as before
	cp -a "$T/N" "$T/old"
	jq 'del(.name) | .sequence = 3' "$T/N/manifest.json" >"$T/m" && mv "$T/m" "$T/old/manifest.json"
	resign "$T/old"
	run chk "$T/old"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"rollback"*"sequence 3 is older than sequence 5 already accepted for key $KID"* ]]
	run chk "$T/old" --json
	[ "$(jq .name <<<"$output")" = null ]
	jq '.sequence = 7' "$T/old/manifest.json" >"$T/m" && mv "$T/m" "$T/old/manifest.json"
	resign "$T/old"
	run chk "$T/old"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .keys[\"$KID\"].sequence "$T/state.json")" -eq 7 ]
	# a per-key sequence above a named export's: refused as older than it
	big=$((now + 100000000))
	printf '{"keys": {"%s": {"sequence": %s, "accepted_at": %s}}}\n' "$KID" "$big" "$now" >"$T/state.json"
	run chk "$T/N"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"'N': sequence $(seq_of "$T/N") is older than sequence $big accepted for key $KID from an export without a name"*"--sequence $((big + 1))"* ]]
	# a state whose "names" is not an object: an error, never a fresh start
	printf '{"keys": {}, "names": []}\n' >"$T/state.json"
	run chk "$T/N"
	[ "$status" -eq 3 ]
	[[ "$output" == *"state"*"unreadable"* ]]
}

@test "the workspace records exports per key and name; migration 0011 names the rows from before after their directory" {
	T=$BATS_TEST_TMPDIR
	ws=$(new_ws 2)
	exp "$ws" "$T/dir/one"
	exp "$ws" "$T/two" --name second
	[ "$(sqlite3 "$ws/index.db" "SELECT group_concat(name, ' ') FROM (SELECT name FROM exports ORDER BY id)")" = "one second" ]
	# the record counts for the name: a stick named 'one' elsewhere continues above it
	s=$(seq_of "$T/dir/one")
	run exp "$ws" "$T/elsewhere/one" --sequence "$s"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not above $s, the last sequence this workspace signed for 'one'"* ]]
	exp "$ws" "$T/elsewhere/one"
	[ "$(seq_of "$T/elsewhere/one")" -gt "$s" ]
	# the migration itself, on rows of the table as 0006 made it
	db=$T/old.db
	sqlite3 "$db" <"$OW_SOURCE_DIR/index/schema/0006_exports.sql"
	for d in /media/usb/torch /srv/a/b/lab-stick s3://lab/exports/stick1 s3://lab; do
		sqlite3 "$db" "INSERT INTO exports(directory, sequence, manifest_sha256, key_id, n_files, bytes, created_at, expires_at) VALUES('$d', 3, 'x', 'k', 1, 1, 1, 2)"
	done
	sqlite3 "$db" <"$OW_SOURCE_DIR/index/schema/0011_export_names.sql"
	[ "$(sqlite3 "$db" "SELECT group_concat(name, ' ') FROM (SELECT name FROM exports ORDER BY id)")" = "torch lab-stick stick1 lab" ]
	# the same names export gives those directories by default
	for d in /media/usb/torch /srv/a/b/lab-stick s3://lab/exports/stick1 s3://lab; do
		[ "$(sqlite3 "$db" "SELECT name FROM exports WHERE directory = '$d'")" = "$(basename "$d")" ]
	done
}

@test "exporting a set that is not fetched names the set and the command that fetches it, not one file" {
	# the resolved set of setup_file, as if its wheels had never been downloaded
	ws=$BATS_TEST_TMPDIR/ws-unfetched
	cp -a "$WS" "$ws"
	sqlite3 "$ws/index.db" "UPDATE files SET object_sha256 = NULL"
	id=$("$OFFWHEEL" --home "$ws" --json ls sets | jq '.sets[0].id')
	n=$("$OFFWHEEL" --home "$ws" --json ls sets | jq '.sets[0].n_members')
	run "$OFFWHEEL" --home "$ws" export "$BATS_TEST_TMPDIR/stick" --target "${TARGET// /-}"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$output" = "offwheel export: set $id ($TARGET) is not fetched ($n of $n files missing): run 'offwheel fetch set:$id', then export again" ]
	[ ! -e "$BATS_TEST_TMPDIR/stick/SHA256SUMS" ]
}
