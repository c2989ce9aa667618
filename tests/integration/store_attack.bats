#!/usr/bin/env bats
# The workspace under attack by a hostile world and a careless user: objects
# replaced by FIFOs and links, flipped bytes and deleted files that must be
# repairable, a deleted lock file, directories where gc expects files, a
# damaged or foreign index.db, a workspace that cannot be written, a mistyped
# --home, and hostile file names.  Every command runs under `timeout`: a hang
# is a failure, not a stuck test.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTPS_URL OW_HTTPS_URL2 OW_CA_FILE OW_NGINX_DIR OW_NGINX_LOG
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

setup() {
	WS=$(mktemp -d)
	PUT="$OW_BUILD_DIR/tests/ow_put"
}

teardown() {
	chmod -R u+w "$WS" "$WS.ro" 2>/dev/null || true
	rm -rf "$WS" "$WS.ro"
}

# ow ARGS...: offwheel on $WS, never allowed to hang
ow() { timeout 60 "$OFFWHEEL" --home "$WS" "$@"; }

# net CMD ARGS...: a command that talks to the test index
net() {
	local cmd=$1
	shift
	timeout 60 "$OFFWHEEL" --home "$WS" "$cmd" --cert "$OW_CA_FILE" --allow-host r2.localhost "$@"
}

obj_path() { echo "$WS/objects/sha256/${1:0:2}/$1"; }

# crawl the stable cu128 torchaudio page and fetch one wheel (a published
# hash) and one nightly wheel (no hash: pinned); prints "FILE SHA" lines
fetch_two() {
	net crawl --index-url "$OW_HTTPS_URL/whl" --variant cu128 --project torchaudio -q
	net crawl --index-url "$OW_HTTPS_URL/whl/nightly" --variant cu128 --project torchaudio -q
	local stable nightly
	stable=$(ow --json ls files --project torchaudio --version 2.10.0+cu128 --python cp312 \
		--platform manylinux_2_28_x86_64 | jq -r '.files[0].filename')
	nightly=$(ow --json ls files --project torchaudio --version '*.dev2025*' --python cp312 \
		--platform manylinux_2_28_x86_64 | jq -r '.files | max_by(.version) | .filename')
	net fetch --json "$stable" "$nightly" | jq -r '.files[] | "\(.filename) \(.sha256)"'
}

# --- non-regular objects -----------------------------------------------------

@test "an object replaced by a FIFO or a link to /dev/zero: verify and fsck exit 3 naming it, no hang" {
	"$PUT" "$WS" random 3 1 11 >/dev/null
	mapfile -t objs < <(find "$WS/objects" -type f | sort)
	rm "${objs[0]}" && mkfifo "${objs[0]}"
	rm "${objs[1]}" && ln -s /dev/zero "${objs[1]}"
	fifo=$(basename "${objs[0]}") link=$(basename "${objs[1]}")
	run ow verify
	[ "$status" -eq 3 ] || { echo "verify: $status $output"; false; }
	[[ "$output" == *"${fifo:0:12}"*"a FIFO"* ]]
	[[ "$output" == *"${link:0:12}"*"a symbolic link"* ]]
	[[ "$output" == *"verified 1 objects"* ]] # the good one is still checked
	run ow --json fsck
	[ "$status" -eq 3 ]
	[ "$(jq .errors <<<"$output")" -eq 2 ]
	[ "$(jq -r "[.issues[] | select(.what == \"$fifo\")][0].kind" <<<"$output")" = corrupt ]
	[ "$(jq -r "[.issues[] | select(.what == \"$link\")][0].kind" <<<"$output")" = corrupt ]
	# still a FIFO and a link: reported, not "repaired" by a reader
	[ -p "${objs[0]}" ] && [ -L "${objs[1]}" ]
}

@test "an object grown or cut short: exit 3 with both sizes, nothing past the recorded size read" {
	"$PUT" "$WS" random 2 1 12 >/dev/null
	mapfile -t objs < <(find "$WS/objects" -type f | sort)
	head -c 100 /dev/zero >>"${objs[0]}"
	truncate -s 1000 "${objs[1]}"
	run ow verify
	[ "$status" -eq 3 ]
	[[ "$output" == *"1048676 bytes on disk, the index says 1048576"* ]]
	[[ "$output" == *"1000 bytes on disk, the index says 1048576"* ]]
}

# --- repair ------------------------------------------------------------------

@test "a flipped byte: verify exit 3, fetch moves it aside and fetches it again, verify exit 0" {
	mapfile -t got < <(fetch_two)
	[ "${#got[@]}" -eq 2 ]
	for line in "${got[@]}"; do
		read -r file sha <<<"$line"
		"$OW_SOURCE_DIR/tests/tools/flipbyte" "$(obj_path "$sha")" 1000
	done
	run ow verify
	[ "$status" -eq 3 ]
	# the repair, for a published hash and for a pinned nightly wheel alike
	for line in "${got[@]}"; do
		read -r file sha <<<"$line"
		run -0 --separate-stderr net fetch --json "$file"
		[ "$(jq -r '.files[0].outcome' <<<"$output")" = done ]
		[[ "$stderr" == *"$file"*"moved aside to $WS/tmp/damaged-$sha"* ]]
		[ "$(jq -r '.files[0].sha256' <<<"$output")" = "$sha" ]
	done
	run ow verify
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# the damaged copies were moved aside, not deleted: garbage fsck names
	run -0 ow --json fsck
	[ "$(jq '[.issues[] | select(.kind == "aside")] | length' <<<"$output")" -eq 2 ]
	[ "$(jq .errors <<<"$output")" -eq 0 ]
	# a second fetch trusts the repaired copies
	read -r file sha <<<"${got[0]}"
	run -0 net fetch --json "$file"
	[ "$(jq -r '.files[0].outcome' <<<"$output")" = had ]
	# gc removes what was moved aside (it is not young: --prune=now anyway)
	run -0 ow gc --prune=now
	run -0 ow --json fsck
	[ "$(jq '.garbage + .errors' <<<"$output")" -eq 0 ]
}

@test "a deleted object and an object replaced by a FIFO are fetched again (no verify needed first)" {
	mapfile -t got < <(fetch_two)
	read -r f1 s1 <<<"${got[0]}"
	read -r f2 s2 <<<"${got[1]}"
	rm "$(obj_path "$s1")"
	rm "$(obj_path "$s2")" && mkfifo "$(obj_path "$s2")"
	run -0 --separate-stderr net fetch --json "$f1" "$f2"
	[ "$(jq .done <<<"$output")" -eq 2 ] || { echo "$output"; false; }
	[[ "$stderr" == *"$f2"*"a FIFO"*"fetching it again"* ]]
	[ -f "$(obj_path "$s2")" ] && [ ! -p "$(obj_path "$s2")" ]
	run ow verify
	[ "$status" -eq 0 ]
	# the FIFO went aside, under tmp/, named
	run -0 ow -v fsck
	[[ "$output" == *"aside $WS/tmp/damaged-$s2"* ]]
}

@test "sync repairs what verify found damaged, and a deleted object" {
	sync() {
		timeout 120 "$OFFWHEEL" --home "$WS" --json sync --index-url "$OW_HTTPS_URL/whl/nightly" \
			--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu128 --python 3.12 \
			--platform linux-x86_64
	}
	run -0 --separate-stderr sync
	mapfile -t wheels < <(ow --json ls objects | jq -r '.objects[] | select(.kind == "wheel") | .sha256')
	[ "${#wheels[@]}" -ge 3 ]
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$(obj_path "${wheels[0]}")" 500
	rm "$(obj_path "${wheels[1]}")"
	run ow verify
	[ "$status" -eq 3 ]
	run -0 --separate-stderr sync
	sync_stderr=$stderr
	run ow verify
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$sync_stderr" == *"${wheels[0]:0:12}"*"found damaged"*"fetching it again"* ]]
	[[ "$sync_stderr" == *"${wheels[1]:0:12}"*"fetching it again"* ]]
}

@test "fetch --force re-hashes a stored file before trusting it (no verify needed first)" {
	mapfile -t got < <(fetch_two)
	read -r file sha <<<"${got[0]}"
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$(obj_path "$sha")" 1000
	run -0 net fetch --json "$file" # same size, not known to be damaged: trusted
	[ "$(jq -r '.files[0].outcome' <<<"$output")" = had ]
	run -0 --separate-stderr net fetch --json --force "$file"
	[ "$(jq -r '.files[0].outcome' <<<"$output")" = done ]
	run ow verify
	[ "$status" -eq 0 ]
}

@test "a repair never takes other bytes than the ones verified before" {
	mapfile -t got < <(fetch_two)
	read -r file sha <<<"${got[1]}" # the nightly wheel: its hash is the pin
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$(obj_path "$sha")" 1000
	run ow verify
	[ "$status" -eq 3 ]
	# the server now serves another (valid) wheel under the same name
	served=$(find "$SRV/www" "$SRV/www2" -name "$file" | head -1)
	[ -f "$served" ]
	cp "$served" "$SRV/saved.whl"
	other=$(find "$(dirname "$served")" -name 'torchaudio-*.whl' ! -name "$file" | head -1)
	[ -f "$other" ]
	cp "$other" "$served"
	run net fetch "$file"
	cp "$SRV/saved.whl" "$served"
	[ "$status" -eq 3 ] || { echo "$output"; false; }
	[[ "$output" == *"$file"*"${sha:0:12}"*"verified before"* ]]
	run ow verify
	[ "$status" -eq 3 ] # not repaired with foreign bytes
}

# --- the lock and gc ---------------------------------------------------------

@test "the lock file deleted while a writer holds the workspace: a second writer still waits" {
	"$PUT" "$WS" random 1 1 1 >/dev/null
	# a writer that holds the workspace until we feed it: it publishes what
	# it reads from a FIFO (the object is written, then recorded)
	mkfifo "$WS.feed"
	"$PUT" "$WS" file "$WS.feed" >/dev/null &
	holder=$!
	for _ in $(seq 50); do [ -s "$WS/lock" ] && break; sleep 0.1; done
	[[ "$(cat "$WS/lock")" == *"ow_put"* ]]
	rm -f "$WS/lock" # the careless user
	run ow --lock-timeout 1 gc --prune=now
	echo "published while gc waited" >"$WS.feed"
	wait "$holder"
	rm -f "$WS.feed"
	[ "$status" -eq 1 ] || { echo "gc did not wait: $output"; false; }
	[[ "$output" == *"waiting for the workspace lock"* ]]
	[[ "$output" == *"in use"* ]]
	# the writer's object was recorded, and nothing was removed under it
	run -0 ow --json fsck
	[ "$(jq .errors <<<"$output")" -eq 0 ]
	[ "$(ow --json ls objects | jq .count)" -eq 2 ]
	run -0 ow gc --prune=now
	[ "$(ow --json ls objects | jq .count)" -eq 2 ]
}

@test "gc keeps fresh garbage for an hour unless --prune=now" {
	"$PUT" "$WS" random 1 1 3 >/dev/null
	abc=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
	mkdir -p "$WS/objects/sha256/ba"
	printf abc >"$(obj_path $abc)" # an orphan: published, not yet recorded
	echo x >"$WS/tmp/obj-fresh"
	echo x >"$WS/tmp/obj-old" && touch -d '2 hours ago' "$WS/tmp/obj-old"
	run -0 ow --json gc
	[ "$(jq .kept_young <<<"$output")" -eq 2 ]
	[ -f "$(obj_path $abc)" ] && [ -f "$WS/tmp/obj-fresh" ] && [ ! -e "$WS/tmp/obj-old" ]
	run -0 ow gc --prune=30m
	[ -f "$(obj_path $abc)" ]
	run -2 ow gc --prune=soon
	[[ "$output" == *"--prune"* ]]
	run -0 ow --json gc --prune=now
	[ "$(jq .removed_objects <<<"$output")" -eq 1 ]
	[ ! -e "$(obj_path $abc)" ] && [ ! -e "$WS/tmp/obj-fresh" ]
	[ "$(ow --json ls objects | jq .count)" -eq 1 ] # the recorded object stays
}

@test "gc meets directories in tmp/ and objects/: names them and removes everything else" {
	"$PUT" "$WS" random 1 1 4 >/dev/null
	mkdir -p "$WS/tmp/a-dir/keep" "$WS/objects/sha256/zz" "$WS/objects/sha256/ab/$(printf 'ab%.0s' {1..32})"
	echo mine >"$WS/tmp/a-dir/keep/file"
	for n in 1 2 3; do echo x >"$WS/tmp/obj-$n"; echo x >"$WS/objects/sha256/stray-$n"; done
	find "$WS/tmp" "$WS/objects" -name 'obj-*' -o -name 'stray-*' | xargs touch -d '2 hours ago'
	run -0 ow gc
	[[ "$output" == *"$WS/tmp/a-dir: a directory, not removed"* ]]
	[[ "$output" == *"$WS/objects/sha256/zz: a directory"* ]]
	[ -z "$(find "$WS/tmp" "$WS/objects" -type f -name 'obj-*' -o -type f -name 'stray-*')" ]
	[ "$(cat "$WS/tmp/a-dir/keep/file")" = mine ]
	run -0 ow --json fsck
	[ "$(jq .errors <<<"$output")" -eq 0 ]
}

@test "a workspace path over 320 bytes: fsck names its garbage whole, and gc removes it" {
	local deep=$WS/deep
	for i in 1 2 3 4 5 6 7; do deep+=/$(printf 'd%.0s' {1..60}); done
	[ "${#deep}" -gt 420 ]
	mkdir -p "$deep"
	timeout 60 "$PUT" "$deep" random 1 1 6 >/dev/null
	echo x >"$deep/tmp/obj-stale"
	echo x >"$deep/objects/sha256/stray-file"
	touch -d '2 hours ago' "$deep/tmp/obj-stale" "$deep/objects/sha256/stray-file"
	run -0 timeout 60 "$OFFWHEEL" --home "$deep" --json fsck
	jq -e --arg p "$deep/objects/sha256/stray-file" '[.issues[] | select(.what == $p)] | length == 1' <<<"$output"
	jq -e --arg p "$deep/tmp/obj-stale" '[.issues[] | select(.what == $p)] | length == 1' <<<"$output"
	run -0 timeout 60 "$OFFWHEEL" --home "$deep" --json gc --prune=now
	[ "$(jq .removed_objects <<<"$output")" -eq 1 ] || { echo "$output"; false; }
	[ "$(jq .left <<<"$output")" -eq 0 ]
	[ ! -e "$deep/tmp/obj-stale" ] && [ ! -e "$deep/objects/sha256/stray-file" ]
	[ "$(timeout 60 "$OFFWHEEL" --home "$deep" --json ls objects | jq .count)" -eq 1 ]
}

@test "gc never follows a link in objects/ out of the workspace" {
	"$PUT" "$WS" random 1 1 5 >/dev/null
	outside=$(mktemp -d)
	echo precious >"$outside/not-an-object"
	touch -d '2 hours ago' "$outside/not-an-object"
	ln -s "$outside" "$WS/objects/sha256/cd"
	run -0 ow gc
	[ "$(cat "$outside/not-an-object")" = precious ]
	rm -rf "$outside"
}

# --- the database ------------------------------------------------------------

@test "a truncated or malformed index.db: damaged, how to recover, fsck exit 3, objects untouched" {
	"$PUT" "$WS" random 30 0 6 >/dev/null
	"$PUT" "$WS" random 2 1 6 >/dev/null
	before=$(find "$WS/objects" -type f | sort | xargs sha256sum)
	cp "$WS/index.db" "$SRV/good.db"
	for damage in truncate garbage; do
		cp "$SRV/good.db" "$WS/index.db"
		case $damage in
		truncate) truncate -s 8192 "$WS/index.db" ;;
		garbage) head -c 3000 /dev/urandom >"$WS/index.db" ;;
		esac
		run ow fsck
		[ "$status" -eq 3 ] || { echo "$damage: $status $output"; false; }
		[[ "$output" == *"index.db: the index database is damaged"* ]]
		[[ "$output" == *"restore it from a backup, or move index.db"* ]]
		[[ "$output" != *"another program holding"* ]]
		run ow verify
		[ "$status" -eq 3 ]
	done
	[ "$(find "$WS/objects" -type f | sort | xargs sha256sum)" = "$before" ]
}

@test "another program's sqlite file is refused untouched, by readers and writers" {
	sqlite3 "$WS/index.db" "CREATE TABLE users(name); INSERT INTO users VALUES('alice');"
	sum=$(sha256sum <"$WS/index.db")
	for cmd in "ls objects" verify fsck "fetch x-1.0-py3-none-any.whl" gc; do
		run ow $cmd
		[ "$status" -eq 1 ] || { echo "$cmd: $status $output"; false; }
		[[ "$output" == *"not an offwheel index"* ]]
		[[ "$output" == *"nothing was changed"* ]]
	done
	[ "$(sha256sum <"$WS/index.db")" = "$sum" ]
	[ ! -e "$WS/objects" ] && [ ! -e "$WS/tmp" ] && [ ! -e "$WS/index.db-wal" ]
}

# run_as_reader CMD...: as a user who may not write the workspace (root
# ignores permissions: then as nobody, through setpriv)
run_as_reader() {
	# the schemas the test suite checks --json against, where that user can read them
	if [ -n "${OFFWHEEL_SCHEMA_DIR:-}" ] && [ -d "$OFFWHEEL_SCHEMA_DIR" ] && [ ! -d "$WS.schemas" ]; then
		cp -r "$OFFWHEEL_SCHEMA_DIR" "$WS.schemas" && chmod -R a+rX "$WS.schemas"
	fi
	[ -d "$WS.schemas" ] && export OFFWHEEL_SCHEMA_DIR="$WS.schemas"
	if [ "$(id -u)" -ne 0 ]; then
		run timeout 60 "$@"
	elif command -v setpriv >/dev/null; then
		run timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		skip "running as root without setpriv: cannot drop write access"
	fi
}

@test "readers work on a workspace they cannot write, and change nothing" {
	"$PUT" "$WS" random 3 1 7 >/dev/null
	cp -a "$WS" "$WS.ro"
	chmod -R a-w,a+rX "$WS.ro"
	chmod a+rx "$(dirname "$WS.ro")"
	listing() { (cd "$WS.ro" && find . -printf '%p %s %T@\n' | sort); }
	before=$(listing)
	run_as_reader "$OFFWHEEL" --home "$WS.ro" --json ls objects
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq .count <<<"$output")" -eq 3 ]
	run_as_reader "$OFFWHEEL" --home "$WS.ro" verify
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run_as_reader "$OFFWHEEL" --home "$WS.ro" fsck
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(listing)" = "$before" ]
	# a damaged object is still reported (exit 3) where nothing can be marked
	chmod u+w "$WS.ro"/objects/sha256/*/ && obj=$(find "$WS.ro/objects" -type f | head -1)
	chmod u+w "$obj" && "$OW_SOURCE_DIR/tests/tools/flipbyte" "$obj" 10 && chmod a-w "$obj"
	chmod a-w "$WS.ro"/objects/sha256/*/
	run_as_reader "$OFFWHEEL" --home "$WS.ro" verify
	[ "$status" -eq 3 ]
}

@test "readers never create a workspace on a mistyped --home" {
	for cmd in "ls objects" "ls files" verify fsck; do
		run timeout 20 "$OFFWHEEL" --home "$WS/typo" $cmd
		[ "$status" -eq 1 ] || { echo "$cmd: $status $output"; false; }
		[[ "$output" == *"no workspace at $WS/typo"* ]]
		[ ! -e "$WS/typo" ]
	done
	mkdir "$WS/empty"
	run timeout 20 "$OFFWHEEL" --home "$WS/empty" verify
	[ "$status" -eq 1 ]
	[ -z "$(ls -A "$WS/empty")" ]
	# writers may create one
	run -0 timeout 20 "$OFFWHEEL" --home "$WS/new" gc
	[ -f "$WS/new/index.db" ]
}

# --- hostile names -----------------------------------------------------------

@test "fsck --json with non-UTF-8 and control characters in names: one valid document, every issue" {
	"$PUT" "$WS" random 1 1 8 >/dev/null
	touch "$WS/tmp/obj-$(printf '\xff\xfe')bad" "$WS/tmp/obj-$(printf '\033[31mred\nline')"
	touch "$WS/objects/sha256/$(printf '\xc3\x28')" "$WS/tmp/obj-plain"
	run -0 ow --json fsck
	jq -e . <<<"$output" >/dev/null
	[ "$(jq -s length <<<"$output")" -eq 1 ]
	[ "$(jq '.issues | length' <<<"$output")" -eq 4 ]
	[ "$(jq '.garbage + .partials' <<<"$output")" -eq 4 ]
	# the exact bytes survive, base64
	jq -r '.issues[] | select(.what_base64) | .what_base64' <<<"$output" | base64 -d | grep -qa "obj-$(printf '\xff\xfe')bad"
	# human output: no raw ESC or newline from a name reaches the terminal
	run -0 ow -v fsck
	[[ "$output" != *$'\033'* ]]
	[[ "$output" == *'obj-\x1b[31mred\x0aline'* ]]
	[[ "$output" == *'obj-\xff\xfebad'* ]]
	[ "$(grep -c 'red' <<<"$output")" -eq 1 ]
}

@test "warnings and errors that quote hostile names escape them (gc, fetch)" {
	"$PUT" "$WS" random 1 1 9 >/dev/null
	mkdir "$WS/tmp/dir-$(printf '\033]0;pwned\007')"
	run -0 ow gc --prune=now
	[[ "$output" != *$'\033'* ]] && [[ "$output" != *$'\007'* ]]
	[[ "$output" == *'dir-\x1b]0;pwned\x07: a directory, not removed'* ]]
	run ow fetch "$(printf 'evil\033[2J-1.0-py3-none-any.whl')"
	[ "$status" -eq 1 ]
	[[ "$output" != *$'\033'* ]]
	[[ "$output" == *'evil\x1b[2J-1.0'*"not in the index"* ]]
}
